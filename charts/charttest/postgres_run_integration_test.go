//go:build integration

package charttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testpg"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestChartReplicasOnPostgresValuesRun starts the two replicas the chart
// renders for examples/replicas-on-postgres.yaml (pod_integration_test.go),
// each with its own token and volumes, from the Secrets the example tells
// people to create: the session keys, the ledger's DSN (a throwaway
// PostgreSQL, internal/testpg) and the audit webhook's serving pair and
// client CA (the devcluster's, whose API server client pair the test sends
// with). A session made on replica 1 works on replica 2; an audit batch
// replica 1's webhook takes (its rendered TLS and client-CA flags) is in the
// ledger replica 2 shows.
func TestChartReplicasOnPostgresValuesRun(t *testing.T) {
	testcluster.Require(t)
	hook := testcluster.RequireAuditWebhook(t)
	dsn := testpg.Database(t)
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	const release = "clusterdesk-chart"
	restrictedNamespace(t, cs, chartNamespace)
	objs := render(t, release, chartNamespace, []string{filepath.Join(chartDir, "examples", "replicas-on-postgres.yaml")})
	dep := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", release).Object, dep); err != nil {
		t.Fatal(err)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Fatalf("the rendered Deployment's replicas: %v, want 2", dep.Spec.Replicas)
	}

	//   head -c 32 /dev/urandom | base64 > keys
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	createSecret(t, cs, chartNamespace, "clusterdesk-session-keys", map[string][]byte{"keys": []byte(base64.StdEncoding.EncodeToString(key) + "\n")})
	createSecret(t, cs, chartNamespace, "clusterdesk-ledger", map[string][]byte{"dsn": []byte(dsn)})
	files := map[string][]byte{}
	for name, path := range map[string]string{"tls.crt": hook.CertFile, "tls.key": hook.KeyFile, "client-ca.crt": hook.ClientCAFile} {
		var err error
		if files[name], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	createSecret(t, cs, chartNamespace, "clusterdesk-audit-webhook", files)
	applyRendered(t, cs, objs)
	// The replicas' shared sign-outs (their heartbeat Lease, any sign-out)
	// go once they have stopped: no namespace controller deletes them.
	t.Cleanup(func() {
		_ = cs.CoordinationV1().Leases(chartNamespace).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	var replicas []*testcluster.ConsoleBinary
	for range *dep.Spec.Replicas {
		replicas = append(replicas, preparePod(t, cs, objs, chartNamespace, release).startConsole(t, nil))
	}

	// Signed in on replica 1; replica 2 opens the cookie (a cookie is the
	// host's, whatever the port: the browser sends it to both).
	browser, who := signInWithToken(t, replicas[0], testcluster.Auditor)
	doc, code := getPage(t, browser, replicas[1].Origin+"/")
	if code != http.StatusOK || who == "" || signedInAs(doc) != who {
		t.Fatalf("replica 2 with replica 1's session: %d, the page names %q, want %q\n%s", code, signedInAs(doc), who, replicas[1].Logs())
	}

	// An audit batch into replica 1's webhook, as the API server sends it.
	addr := replicas[0].WaitLog(t, regexp.MustCompile(`msg="serving the audit webhook" addr=(\S+)`), time.Second, "replica 1's audit webhook")[1]
	pair, err := tls.LoadX509KeyPair(hook.ClientCertFile, hook.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(os.Getenv(testcluster.EnvDir), "pki", "ca.crt"))
	if err != nil || !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("the devcluster's CA: %v", err)
	}
	sender := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}
	name := strings.ToLower(strings.ReplaceAll(fmt.Sprintf("chart-ledger-%d", time.Now().UnixNano()), "_", "-"))
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z") // metav1.MicroTime
	batch := fmt.Sprintf(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[{"level":"Metadata",`+
		`"auditID":"%s","stage":"ResponseComplete","requestURI":"/apis/certificates.k8s.io/v1/certificatesigningrequests/%s",`+
		`"verb":"delete","user":{"username":"chart-ledger-person","groups":["system:authenticated"]},"sourceIPs":["127.0.0.1"],`+
		`"userAgent":"charttest","objectRef":{"resource":"certificatesigningrequests","name":"%s","apiGroup":"certificates.k8s.io","apiVersion":"v1"},`+
		`"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"%s","stageTimestamp":"%s"}]}`,
		"chart-"+name, name, name, now, now)
	resp, err := sender.Post("https://"+addr+"/", "application/json", bytes.NewReader([]byte(batch)))
	if err != nil {
		t.Fatalf("post to replica 1's audit webhook %s: %v", addr, err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("replica 1's audit webhook answered %s: %s\n%s", resp.Status, answer, replicas[0].Logs())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		doc, code = getPage(t, browser, replicas[1].Origin+urls.LedgerObject("csrs", name, ""))
		if code == http.StatusOK && strings.Contains(doc.Find(`[data-testid="ledger-step"]`).Text(), "chart-ledger-person") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica 2's ledger of CSR %s (%d) does not show the deletion replica 1 took in\n%s", name, code, replicas[1].Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
