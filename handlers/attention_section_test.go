package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	handlerpage "github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
)

// oneResource allows everything on one resource and nothing else: a user
// who may list fewer kinds than an administrator.
type oneResource string

func (r oneResource) Can(_ context.Context, _, _, resource, _, _ string) (bool, error) {
	return resource == string(r), nil
}

// The home page and the live updates of its attention section lay the
// section out in one place (page.AttentionSection): for one access, the page
// holds exactly the bytes its live view renders, when the tab opens and after
// a change, for an administrator and for a user who may list CSRs only.
func TestHomePageAndLiveAttentionRenderTheSameSection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		access Access
		kinds  []kube.KindID
	}{
		{"admin", allowAll{}, nil},
		{"CSRs only", oneResource("certificatesigningrequests"), []kube.KindID{kube.CSRs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Days old: the ages the section shows do not move between the
			// page and the live rendering.
			old := time.Now().Add(-72 * time.Hour)
			var items []*certificatesv1.CertificateSigningRequest
			for i := range 3 {
				c := fakeCSR(t, fmt.Sprintf("csr-%d", i), apiClientSigner, "storm-user", old.Add(time.Duration(i)*time.Minute))
				c.ResourceVersion = "1"
				items = append(items, c)
			}
			cl := &notifyingCSRs{csrCluster: newCSRCluster(items...)}
			streams := live.NewStreams(live.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			t.Cleanup(streams.Close)
			lv := NewLiveUpdates(cl, streams)
			ts := newConsole(t, Deps{Cluster: cl, Access: tc.access, User: "tester", Live: lv})
			e, sess := ts.e, ts.login(t)
			home := func() string {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.AddCookie(sess)
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, r)
				if rec.Code != http.StatusOK {
					t.Fatalf("home page: status %d", rec.Code)
				}
				return rec.Body.String()
			}

			page := home()
			kinds := tc.kinds
			if kinds == nil {
				for _, st := range cl.Statuses() {
					kinds = append(kinds, st.Kind.ID)
				}
			}
			slices.Sort(kinds)
			acc := handlerpage.AttentionAccess{Kinds: kinds}
			topic, release, ok := lv.OpenAttention(acc)
			if !ok {
				t.Fatal("no live view opened")
			}
			defer release()
			shown := string(lv.AttentionShown(acc))
			if !strings.Contains(shown, "storm-user") || !strings.Contains(page, shown) {
				t.Fatalf("the page does not hold the live section:\n%s\nthe page:\n%s", shown, page)
			}

			added := fakeCSR(t, "csr-new", "example.com/attention", "user-new", old)
			added.ResourceVersion = "1"
			cl.items[added.Name], cl.order = added, append(cl.order, added)
			for _, fn := range cl.listeners {
				fn(kube.CSRs, added.Name)
			}
			var sent string
			// What a batch of changes sends the view (Render's attention part).
			for _, m := range lv.AttentionChanges() {
				if m.Topic == topic {
					sent = string(m.Data)
				}
			}
			if !strings.Contains(sent, "example.com/attention") {
				t.Fatalf("the live update after a new CSR: %q", sent)
			}
			if page := home(); !strings.Contains(page, sent) {
				t.Fatalf("the page after the change does not hold the live section:\n%s\nthe page:\n%s", sent, page)
			}
		})
	}
}
