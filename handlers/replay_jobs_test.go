package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// heldWrites is a ledger whose recorded writes' scan waits for release (or
// its context), so that a replay stays running while a test acts on it.
type heldWrites struct {
	ledger.Store
	ws               ledger.WriteStore
	entered, release chan struct{}
}

func (h *heldWrites) AppendWrites(ctx context.Context, w []ledger.Write) (int, error) {
	return h.ws.AppendWrites(ctx, w)
}
func (h *heldWrites) PruneWrites(ctx context.Context, before time.Time) (int64, error) {
	return h.ws.PruneWrites(ctx, before)
}
func (h *heldWrites) WriteStats(ctx context.Context) (ledger.WriteStats, error) {
	return h.ws.WriteStats(ctx)
}
func (h *heldWrites) CountWrites(ctx context.Context, q ledger.WriteQuery) (int64, error) {
	return h.ws.CountWrites(ctx, q)
}

// The WriteStore the console finds in its ledger (replayFeature).
var _ ledger.WriteStore = (*heldWrites)(nil)

func (h *heldWrites) ScanWrites(ctx context.Context, q ledger.WriteQuery, each func(*ledger.Write) error) error {
	h.entered <- struct{}{}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-h.release:
	}
	return h.ws.ScanWrites(ctx, q, each)
}

// replayForm is the replay form's fields with draft as the text.
func replayForm(draft string) url.Values { return url.Values{"draft": {draft}, "window": {"1h"}} }

// replayDraft is a draft the engine compiles: a policy and its binding.
const replayDraft = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]}
  validations: [{expression: "true"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: p}
spec: {policyName: p, validationActions: [Deny]}
`

// replayJobsConsole is a token-mode console with live updates whose
// recorded writes are held, and the sessions of alice and bob.
func replayJobsConsole(t *testing.T) (ts *testServer, held *heldWrites, alice, bob *http.Cookie) {
	t.Helper()
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	held = &heldWrites{Store: st, ws: st.(ledger.WriteStore), entered: make(chan struct{}, 4), release: make(chan struct{})}
	cl := newLiveCluster()
	streams := live.NewStreams(live.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(streams.Close)
	ts, alice, bob = aliceAndBobConsole(t, Deps{Cluster: cl, Access: allowKinds{"validatingadmissionpolicies": true}, User: "console",
		Live: NewLiveUpdates(cl, streams), Ledger: held})
	return ts, held, alice, bob
}

// aliceAndBobConsole is a token-mode console built from deps, and the
// sessions of alice and bob (each owns their replays).
func aliceAndBobConsole(t *testing.T, deps Deps, opts ...consoleOption) (ts *testServer, alice, bob *http.Cookie) {
	t.Helper()
	ts = newConsole(t, deps, append(opts,
		tokenMode(func(_ context.Context, token string) (kube.Identity, error) {
			if user, ok := strings.CutSuffix(token, "-token"); ok && (user == "alice" || user == "bob") {
				return kube.Identity{User: user, Groups: []string{"system:authenticated"}, Act: kube.ActWithToken, Token: token}, nil
			}
			return kube.Identity{}, apierrors.NewUnauthorized("invalid bearer token")
		}))...)
	signIn := func(token string) *http.Cookie {
		rec := httptest.NewRecorder()
		ts.e.ServeHTTP(rec, tokenSignInRequest(t, ts.e, token))
		return sessionCookie(t, rec)
	}
	return ts, signIn("alice-token"), signIn("bob-token")
}

// startReplay posts the replay form with htmx as sess and returns the job's
// URL from the progress bar it answers with.
func startReplay(t *testing.T, ts *testServer, sess *http.Cookie) string {
	t.Helper()
	rec, doc := ts.request(t, sess, http.MethodPost, urls.PolicyReplay("p"), replayForm(replayDraft), true)
	job, ok := doc.Find("[data-testid=replay-job]").Attr("data-job-url")
	if rec.Code != http.StatusOK || !ok {
		t.Fatalf("start: status %d, no job: %s", rec.Code, doc.Text())
	}
	return job
}

// TestReplayJobIsItsOwnersAlone is the attack: bob, signed in, holds the
// URL of alice's running replay (its ID leaked) and asks for its page, its
// event stream and its cancellation; someone signed out asks too. Each is
// told there is no such replay, and alice's replay runs on: she still sees
// it running, and she alone cancels it.
func TestReplayJobIsItsOwnersAlone(t *testing.T) {
	ts, held, alice, bob := replayJobsConsole(t)
	job := startReplay(t, ts, alice)
	testwait.Recv(t, held.entered, 10*time.Second, "alice's replay to read the writes")
	id := job[strings.LastIndex(job, "/")+1:]

	if code, doc := ts.getDoc(t, bob, job); code != http.StatusNotFound || doc.Find("[data-testid=replay-job]").Length() != 0 {
		t.Errorf("bob's GET of alice's replay: status %d", code)
	}
	if rec := ts.post(t, bob, job+"/cancel", nil); rec.Code != http.StatusNotFound {
		t.Errorf("bob's cancel of alice's replay: status %d", rec.Code)
	}
	// Bob's stream naming her job: refused before any stream is served
	// (bounded, should it be served).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := newGet(urls.Events+"?kinds=&job="+id, bob).WithContext(ctx)
	r.Header.Set("Accept", "text/event-stream")
	if rec := ts.do(r); rec.Code != http.StatusNotFound {
		t.Errorf("bob's event stream of alice's replay: status %d, want 404", rec.Code)
	}
	anon := httptest.NewRequest(http.MethodGet, job, nil)
	if rec := ts.do(anon); rec.Code == http.StatusOK {
		t.Errorf("a signed-out GET of alice's replay: status %d", rec.Code)
	}

	if code, doc := ts.getDoc(t, alice, job); code != http.StatusOK || doc.Find("[data-testid=replay-job]").Length() != 1 {
		t.Fatalf("alice's replay after bob's attempts: status %d, running %d: %s", code, doc.Find("[data-testid=replay-job]").Length(), doc.Find("main").Text())
	}
	rec, doc := ts.request(t, alice, http.MethodPost, job+"/cancel", url.Values{}, true)
	if msg := doc.Find("[data-testid=replay-error]").Text(); rec.Code != http.StatusOK || !strings.Contains(msg, "cancelled") {
		t.Fatalf("alice's cancel: status %d, %q", rec.Code, msg)
	}
}

// TestReplayJobsAreBoundedPerUser: a second replay of alice while her first
// runs is refused with words beside the form, and runs nothing; bob's runs.
func TestReplayJobsAreBoundedPerUser(t *testing.T) {
	ts, held, alice, bob := replayJobsConsole(t)
	startReplay(t, ts, alice)
	testwait.Recv(t, held.entered, 10*time.Second, "alice's replay to read the writes")
	_, doc := ts.request(t, alice, http.MethodPost, urls.PolicyReplay("p"), replayForm(replayDraft), true)
	if msg := doc.Find("[data-testid=replay-error]").Text(); !strings.Contains(msg, "running already") || doc.Find("[data-testid=replay-job]").Length() != 0 {
		t.Errorf("alice's second replay: %q", msg)
	}
	startReplay(t, ts, bob)
	testwait.Recv(t, held.entered, 10*time.Second, "bob's replay to read the writes")
	close(held.release)
}

// TestReplayJobShowsItsResult: a plain POST is sent to the job's page, which
// shows the progress bar, then the result once the replay ends.
func TestReplayJobShowsItsResult(t *testing.T) {
	ts, held, alice, _ := replayJobsConsole(t)
	rec := ts.post(t, alice, urls.PolicyReplay("p"), replayForm(replayDraft))
	job := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(job, urls.PolicyReplay("p")+"/jobs/") {
		t.Fatalf("plain POST: status %d, Location %q", rec.Code, job)
	}
	testwait.Recv(t, held.entered, 10*time.Second, "the replay to read the writes")
	if _, doc := ts.getDoc(t, alice, job); doc.Find("progress[data-testid=replay-progress]").Length() != 1 {
		t.Fatalf("running replay's page has no progress bar: %s", doc.Find("#replay-outcome").Text())
	}
	close(held.release)
	waitFor(t, "the replay's result", 10*time.Second, func() bool {
		_, doc := ts.getDoc(t, alice, job)
		return doc.Find("[data-testid=replay-result]").Length() == 1
	})
}

// replayOutcome posts the replay form as sess (htmx when hx) and, when it
// started a replay, waits (bounded) for the replay's page to show the
// outcome, which it returns; a refused draft's answer is returned as it is.
func replayOutcome(t *testing.T, ts *testServer, sess *http.Cookie, path string, form url.Values, hx bool) (*httptest.ResponseRecorder, *goquery.Document) {
	t.Helper()
	rec, doc := ts.request(t, sess, http.MethodPost, path, form, hx)
	job := rec.Header().Get("Location")
	if hx {
		job, _ = doc.Find("[data-testid=replay-job]").Attr("data-job-url")
	}
	if job == "" {
		return rec, doc
	}
	waitFor(t, "the replay to end", 60*time.Second, func() bool {
		rec, doc = ts.request(t, sess, http.MethodGet, job, nil, hx)
		return rec.Code != http.StatusOK || doc.Find("[data-testid=replay-job]").Length() == 0
	})
	return rec, doc
}
