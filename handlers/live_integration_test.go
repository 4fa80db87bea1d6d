//go:build integration

package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// liveStack is the console's live path on the devcluster: admin's cache feeding
// a hub, rendered once, published to streams.
type liveStack struct {
	cache   *kube.Cache
	streams *live.Streams
	updates *LiveUpdates
	log     *slog.Logger
}

func newLiveStack(t *testing.T) *liveStack {
	t.Helper()
	return newLiveStackWith(t, liveHubWraps{})
}

// liveHubWraps wrap the hub's renderer and publisher (nil: as they are), for
// a test that holds a batch back.
type liveHubWraps struct {
	render func(live.Renderer) live.Renderer
	out    func(live.Publisher) live.Publisher
}

// newLiveStackWith is newLiveStack with the hub's parts wrapped.
func newLiveStackWith(t *testing.T, wraps liveHubWraps) *liveStack {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache, err := kube.NewCache(testcluster.RestConfig(t, testcluster.Admin), log)
	if err != nil {
		t.Fatal(err)
	}
	s := &liveStack{cache: cache, log: log, streams: live.NewStreams(live.Options{Log: log})}
	s.updates = NewLiveUpdates(cache, s.streams)
	render, out := live.Renderer(s.updates.Render), live.Publisher(s.streams)
	if wraps.render != nil {
		render = wraps.render(render)
	}
	if wraps.out != nil {
		out = wraps.out(out)
	}
	hub := live.NewHub(render, out, live.HubOptions{Log: log})
	cache.OnChange(hub.Notify)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { s.streams.Close(); cancel() })
	go hub.Run(ctx)
	go cache.Run(ctx)
	waitFor(t, "cache ready", 30*time.Second, cache.Ready)
	return s
}

// server serves the console with the user's access checked by access.
func (s *liveStack) server(t *testing.T, access Access) (*httptest.Server, *http.Cookie) {
	t.Helper()
	return s.serverWith(t, access, nil)
}

// serverWith is server with more dependencies set by with (nil for none).
func (s *liveStack) serverWith(t *testing.T, access Access, with func(*Deps)) (*httptest.Server, *http.Cookie) {
	t.Helper()
	ts := newConsole(t, Deps{Log: s.log, Cluster: s.cache, Access: access, User: "it", Live: s.updates}, with)
	srv := httptest.NewServer(ts.e)
	t.Cleanup(srv.Close)
	return srv, loginOver(t, srv.URL, ts.token)
}

// subscribe opens /events and returns its events on a channel.
func subscribe(t *testing.T, srv *httptest.Server, sess *http.Cookie, query string) <-chan sseclient.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?"+query, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.AddCookie(sess)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/events: status %d", resp.StatusCode)
	}
	events := make(chan sseclient.Event, 256)
	go func() {
		defer resp.Body.Close()
		defer close(events)
		r := sseclient.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			events <- ev
		}
	}()
	return events
}

// await returns the first event that satisfies match, failing after d.
func await(t *testing.T, events <-chan sseclient.Event, d time.Duration, what string, match func(sseclient.Event) bool) sseclient.Event {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("stream ended before %s", what)
			}
			if match(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s within %v", what, d)
		}
	}
}

func TestLiveCSRChangesReachTheStream(t *testing.T) {
	s := newLiveStack(t)
	access, err := kube.NewAccess(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	srv, sess := s.server(t, access)
	events := subscribe(t, srv, sess, "kinds=csrs&rows=csrs&since="+s.streams.Cursor())
	if hello := await(t, events, 10*time.Second, "hello", func(sseclient.Event) bool { return true }); hello.Event != live.HelloEvent || hello.Data != "csrs" {
		t.Fatalf("first event %+v", hello)
	}

	name := testcluster.CreateCSR(t, testcluster.CSR{Signer: "example.com/clusterdesk-live"})
	rowID := `id="row-csrs-` + name + `"`
	created := await(t, events, 10*time.Second, "the created CSR's row", func(ev sseclient.Event) bool {
		return ev.Event == "csrs-rows" && strings.Contains(ev.Data, rowID)
	})
	if !strings.Contains(htmlText(t, created.Data), "example.com/clusterdesk-live") || strings.Contains(created.Data, "data-live-removed") {
		t.Fatalf("row %q", created.Data)
	}

	// An annotation of user text with SSE syntax in it: the row comes as data, once.
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	patch := `{"metadata":{"annotations":{"note":"line\nevent: evil\ndata: injected\r\n\nid: 9"}}}`
	if _, err := cs.CertificatesV1().CertificateSigningRequests().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	await(t, events, 10*time.Second, "the updated row", func(ev sseclient.Event) bool {
		if ev.Event == "evil" {
			t.Fatalf("user text became an event: %+v", ev)
		}
		return ev.Event == "csrs-rows" && strings.Contains(ev.Data, rowID)
	})

	if err := cs.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	await(t, events, 10*time.Second, "the removal", func(ev sseclient.Event) bool {
		return ev.Event == "csrs-rows" && strings.Contains(ev.Data, rowID) && strings.Contains(ev.Data, "data-live-removed")
	})
}

// A user gets events only for the kinds they may list, as the pages check it.
func TestLiveOnlyKindsTheUserMayList(t *testing.T) {
	s := newLiveStack(t)
	for _, tc := range []struct {
		name string
		cfg  *rest.Config
		want string
	}{
		// The approver may list CSRs but not CRDs.
		{"approver", testcluster.RestConfig(t, testcluster.Approver), "csrs"},
		// Someone with no RBAC at all may list neither.
		{"nobody", impersonate(testcluster.RestConfig(t, testcluster.Admin), "clusterdesk-it-nobody"), "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			access, err := kube.NewAccess(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			srv, sess := s.server(t, access)
			events := subscribe(t, srv, sess, "kinds=crds,csrs&rows=crds,csrs&since="+s.streams.Cursor())
			hello := await(t, events, 10*time.Second, "hello", func(sseclient.Event) bool { return true })
			if hello.Event != live.HelloEvent || hello.Data != tc.want {
				t.Fatalf("hello %+v, want kinds %q", hello, tc.want)
			}
		})
	}
}

func impersonate(cfg *rest.Config, user string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}
