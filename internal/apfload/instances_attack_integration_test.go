//go:build integration

package apfload

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// decoy is a TLS listener posing as an API server instance: it counts the
// connections it is offered and keeps the Authorization headers it is sent.
type decoy struct {
	srv   *httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	auth  []string
}

// newDecoy listens on ip (the API server refuses loopback addresses in an
// EndpointSlice, so it is one of the machine's own non-loopback addresses).
func newDecoy(t *testing.T, ip string) *decoy {
	t.Helper()
	d := &decoy{}
	d.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.auth = append(d.auth, r.Header.Get("Authorization"))
		d.mu.Unlock()
		http.NotFound(w, r)
	}))
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	d.srv.Listener = l
	d.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew { // on accept, before the TLS handshake
			d.conns.Add(1)
		}
	}
	d.srv.StartTLS()
	t.Cleanup(d.srv.Close)
	return d
}

func (d *decoy) headers() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.auth...)
}

// TestAPFLoadFollowsOnlyTheAPIServersSlice (issue 43): someone who may create
// EndpointSlices in default labels one for the kubernetes Service, listing a
// listener of theirs. The per-instance reader must never connect to it:
// with a verifying kubeconfig it reads only the API server's own slice (and
// still reads the real instances), and with one that skips TLS verification
// it reads no instance at all, only the kubeconfig's server, and says why.
// The console authenticates with a bearer token, which a decoy would keep.
func TestAPFLoadFollowsOnlyTheAPIServersSlice(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()
	ip := testcluster.NonLoopbackAddress(t)
	d := newDecoy(t, ip)
	port := int32(d.srv.Listener.Addr().(*net.TCPAddr).Port)
	https, ready := "https", true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kubernetes-decoy-%d", time.Now().UnixNano()),
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &https, Port: &port}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.DiscoveryV1().EndpointSlices("default").Delete(context.Background(), slice.Name, metav1.DeleteOptions{})
	})

	// The console's identity, as a bearer token, with what the sampler reads.
	sa := testcluster.NewServiceAccount(t, "apfload-decoy-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}},
		{NonResourceURLs: []string{kube.APIServerMetricsPath, kube.APIServerPriorityLevelDumpPath}, Verbs: []string{"get"}},
	})
	console := sa.RestConfig(t)
	insecure := rest.CopyConfig(console)
	insecure.Insecure, insecure.CAData, insecure.CAFile = true, nil, ""

	for _, tc := range []struct {
		name string
		cfg  *rest.Config
		// direct: the real instances are read at their own addresses.
		direct bool
	}{
		{"verifying kubeconfig", console, true},
		{"insecure kubeconfig", insecure, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fetch, err := kube.APIServerMetrics(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			list, err := kube.APIServerInstances(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := New(fetch, Options{Instances: DiscoverFrom(list)})
			s.scrapeOnce(ctx)
			ld, err := s.Latest()
			if err != nil {
				t.Fatalf("no load read: %v", err)
			}
			if n, auth := d.conns.Load(), d.headers(); n != 0 || len(auth) != 0 {
				t.Errorf("the decoy was offered %d connections and sent %d Authorization headers", n, len(auth))
			}
			for _, in := range ld.Instances {
				if in.Name == d.srv.Listener.Addr().String() {
					t.Errorf("the decoy %s is read as an instance", in.Name)
				}
			}
			switch {
			case tc.direct && (ld.Fallback != "" || len(ld.Instances) == 0):
				t.Errorf("the real instances are not read at their addresses: fallback %q, %d instances", ld.Fallback, len(ld.Instances))
			case !tc.direct && (len(ld.Instances) != 0 || !strings.Contains(ld.Fallback, "skips TLS verification")):
				t.Errorf("with an insecure kubeconfig: %d instances read, fallback %q", len(ld.Instances), ld.Fallback)
			}
		})
	}
}
