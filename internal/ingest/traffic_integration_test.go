//go:build integration

package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// flowCount is one expected flow of TestTrafficRecordsEveryReadPerFlowAndInstance.
type flowCount struct {
	instance, user, verb, resource, namespace, url, class string
}

// TestTrafficRecordsEveryReadPerFlowAndInstance: the devcluster's two API
// servers, with the shipped audit policy, report every read at Metadata to
// the console's webhook, each under its own /apiservers/<address>; known
// numbers of LISTs, GETs, a non-resource GET and a watch, as different
// users (impersonated by the admin, as system:masters so that they are
// served), on each instance, are recorded per flow and instance exactly,
// into SQLite and into PostgreSQL.
func TestTrafficRecordsEveryReadPerFlowAndInstance(t *testing.T) {
	apiservers := testcluster.APIServers(t, 2)
	for _, be := range []struct {
		name  string
		store func(t *testing.T) ledger.Store
	}{{"sqlite", sqliteLedger}, {"postgres", pgLedger}} {
		t.Run(be.name, func(t *testing.T) {
			store := be.store(t)
			ts := store.(ledger.TrafficStore)
			webhookUnderTest(t, store, Options{Traffic: ts}, true)
			recordReads(t, ts, apiservers)
		})
	}
}

// recordReads makes the reads and waits until the traffic holds exactly
// them (bounded).
func recordReads(t *testing.T, ts ledger.TrafficStore, apiservers []testcluster.APIServer) {
	nonce := fmt.Sprintf("traffic-%d", time.Now().UnixNano())
	as := func(a testcluster.APIServer, user string) *kubernetes.Clientset {
		cfg := testcluster.RestConfig(t, testcluster.Admin)
		cfg.Host = a.Server
		cfg.Impersonate = rest.ImpersonationConfig{UserName: nonce + "-" + user, Groups: []string{"system:masters"}}
		return kubernetes.NewForConfigOrDie(cfg)
	}
	instance := func(a testcluster.APIServer) string { return strings.TrimPrefix(a.Server, "https://") }
	one, two := apiservers[0], apiservers[1]
	ctx := context.Background()
	since := time.Now().Add(-time.Second)
	want := map[flowCount]int64{}
	repeat := func(n int, f flowCount, do func() error) {
		for range n {
			if err := do(); err != nil {
				t.Fatalf("%+v: %v", f, err)
			}
		}
		want[f] += int64(n)
	}
	alice1, alice2, bob2, carol1 := as(one, "alice"), as(two, "alice"), as(two, "bob"), as(one, "carol")
	repeat(7, flowCount{instance(one), nonce + "-alice", "list", "configmaps", "default", "", ""}, func() error {
		_, err := alice1.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err
	})
	// A namespace's own namespace is its name, to the audit event as to APF
	// (the API server's RequestInfo for /api/v1/namespaces/<name>).
	repeat(4, flowCount{instance(two), nonce + "-alice", "get", "namespaces", "default", "", ""}, func() error {
		_, err := alice2.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	repeat(5, flowCount{instance(two), nonce + "-bob", "list", "flowschemas", "", "", ""}, func() error {
		_, err := bob2.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
		return err
	})
	repeat(3, flowCount{instance(one), nonce + "-carol", "get", "", "", "/version", ""}, func() error {
		_, err := carol1.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
		return err
	})
	repeat(2, flowCount{instance(one), nonce + "-carol", "watch", "configmaps", "default", "", ledger.ClassWatch}, func() error {
		timeout := int64(1)
		w, err := carol1.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{TimeoutSeconds: &timeout})
		if err != nil {
			return err
		}
		for range w.ResultChan() { // until the API server ends it
		}
		return nil
	})

	var got map[flowCount]int64
	deadline := time.Now().Add(60 * time.Second)
	for {
		got = map[flowCount]int64{}
		// Every read was served (no 429): each bucket's served latency is
		// all of its latency, its minimum a real one within the maximum.
		var unserved []ledger.TrafficBucket
		err := ts.ScanTraffic(ctx, ledger.TrafficQuery{Since: since}, func(b *ledger.TrafficBucket) error {
			s := b.Series
			if !strings.HasPrefix(s.User, nonce) {
				return nil
			}
			got[flowCount{s.Instance, s.User, s.Verb, s.Resource, s.Namespace, s.NonResourceURL, s.Class}] += b.Requests
			if b.Rejected != 0 || b.ServedLatencySum != b.LatencySum || b.ServedLatencyMin <= 0 || b.ServedLatencyMin > b.LatencyMax {
				unserved = append(unserved, *b)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if equalCounts(got, want) {
			if len(unserved) > 0 {
				t.Errorf("buckets of served reads without their served latency: %+v", unserved)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the traffic holds\n%v\nwant\n%v", got, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func equalCounts(a, b map[flowCount]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
