//go:build integration

package faults

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/handlers"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// console is the console wired as cmd/clusterdesk wires it (cache, live hub,
// writer, editor), on its own rest.Config (the tests point it at a proxy they
// can cut), served over real HTTP with a signed-in session.
type console struct {
	srv    *httptest.Server
	client *http.Client // the first session's browser; it does not follow redirects
	cache  *kube.Cache
	logs   *logRecorder

	mu    sync.Mutex
	token string // the next one-time login token
}

// startConsole starts the console on cfg; with, when given, adds to its
// dependencies (a ledger, an audit recorder).
func startConsole(t *testing.T, cfg *rest.Config, with ...func(*handlers.Deps)) *console {
	t.Helper()
	logs := &logRecorder{}
	// Debug keeps client-go's reflector messages (its V(4) is slog's Debug).
	log := slog.New(logs)
	cache, err := kube.NewCache(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	access, err := kube.NewAccess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writer, err := kube.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	editor, err := kube.NewEditor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	streams := live.NewStreams(live.Options{Log: log})
	updates := handlers.NewLiveUpdates(cache, streams)
	hub := live.NewHub(updates.Render, streams, live.HubOptions{Log: log})
	cache.OnChange(hub.Notify)
	go hub.Run(ctx)
	go cache.Run(ctx)

	c := &console{cache: cache, logs: logs}
	deps := handlers.Deps{
		Log: log, Cluster: cache, Access: access, Writer: writer, Editor: editor,
		Sessions: auth.NewSessions(), Logins: auth.NewLoginTokens(func(tok string) { c.mu.Lock(); c.token = tok; c.mu.Unlock() }),
		User: testcluster.Admin, Live: updates,
	}
	for _, w := range with {
		w(&deps)
	}
	h := handlers.New(deps)
	c.srv = httptest.NewServer(h)
	t.Cleanup(func() {
		c.srv.CloseClientConnections()
		c.srv.Close()
		streams.Close()
		cancel()
	})
	poll(t, "the console's cache to sync", 60*time.Second, cache.Ready)

	c.client = c.signIn(t)
	c.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// signIn opens a session of its own, as another browser would, and returns
// its client (which follows redirects).
func (c *console) signIn(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c.mu.Lock()
	token := c.token
	c.mu.Unlock()
	resp, err := client.Get(c.srv.URL + "/login?token=" + url.QueryEscape(token))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: status %d", resp.StatusCode)
	}
	client.CheckRedirect = nil
	return client
}

// get fetches a page as the signed-in browser.
func (c *console) get(t *testing.T, path string) (int, *goquery.Document) {
	t.Helper()
	resp, err := c.client.Get(c.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, doc
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// post sends a form as the browser does from a clusterdesk page (same origin,
// with the page's CSRF token).
func (c *console) post(t *testing.T, path string, form url.Values) (int, *goquery.Document) {
	t.Helper()
	if form.Get("_csrf") == "" {
		// The token every page carries for its forms, bound to this session.
		_, doc := c.get(t, "/")
		tok, _ := doc.Find(`meta[name="csrf-token"]`).Attr("content")
		form = cloneValues(form)
		form.Set("_csrf", tok)
	}
	req, err := http.NewRequest(http.MethodPost, c.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, doc
}

// subscribe opens the page's event stream (its data-live-url) and returns its
// events on a channel; the stream stays open until the test ends.
func (c *console) subscribe(t *testing.T, page string) <-chan sseclient.Event {
	t.Helper()
	_, doc := c.get(t, page)
	u, ok := doc.Find("body").Attr("data-live-url")
	if !ok {
		t.Fatalf("%s has no data-live-url", page)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.srv.URL+u, nil)
	req.Header.Set("Accept", "text/event-stream")
	sc := &http.Client{Jar: c.client.Jar} // no timeout: the stream is long-lived
	resp, err := sc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d", u, resp.StatusCode)
	}
	events := make(chan sseclient.Event, 1024)
	go func() {
		defer resp.Body.Close()
		defer close(events)
		r := sseclient.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			select {
			case events <- ev:
			default: // the test reads what it needs; never block the stream
			}
		}
	}()
	return events
}

// await returns the first event that satisfies match, failing after d.
func await(t *testing.T, events <-chan sseclient.Event, d time.Duration, what string, match func(sseclient.Event) bool) sseclient.Event {
	t.Helper()
	deadline := time.After(d)
	var skipped []string
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the event stream ended before %s; events before: %s", what, strings.Join(skipped, "; "))
			}
			if match(ev) {
				return ev
			}
			skipped = append(skipped, fmt.Sprintf("%s %.120q", ev.Event, ev.Data))
		case <-deadline:
			t.Fatalf("no %s within %v; events meanwhile: %s", what, d, strings.Join(skipped, "; "))
		}
	}
}

// awaitAll reads events until each condition has been met by one of them,
// in any order, failing after d.
func awaitAll(t *testing.T, events <-chan sseclient.Event, d time.Duration, conds map[string]func(sseclient.Event) bool) {
	t.Helper()
	deadline := time.After(d)
	var seen []string
	for len(conds) > 0 {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the event stream ended; still waiting for %v; events: %s", slices.Collect(maps.Keys(conds)), strings.Join(seen, "; "))
			}
			seen = append(seen, fmt.Sprintf("%s %.120q", ev.Event, ev.Data))
			for what, match := range conds {
				if match(ev) {
					delete(conds, what)
				}
			}
		case <-deadline:
			t.Fatalf("not within %v on the open stream: %v; events: %s", d, slices.Collect(maps.Keys(conds)), strings.Join(seen, "; "))
		}
	}
}

func (c *console) waitCached(t *testing.T, names ...string) {
	t.Helper()
	poll(t, "the console's cache to hold "+strings.Join(names, ", "), 30*time.Second, func() bool {
		for _, n := range names {
			if _, err := c.cache.CSR(n); err != nil {
				return false
			}
		}
		return true
	})
}

// logRecorder is a slog.Handler keeping every record's message and attributes
// as one line, so a test can show what the console's informers went through.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

// Enabled keeps Debug (client-go's V(4), where the reflector says why a watch
// closed) and drops the more verbose levels (request and response bodies).
func (r *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelDebug }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", rec.Level, rec.Message)
	rec.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	r.mu.Lock()
	r.lines = append(r.lines, b.String())
	r.mu.Unlock()
	return nil
}

func (r *logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &sharedRecorder{r: r, attrs: as}
}

func (r *logRecorder) WithGroup(string) slog.Handler { return r }

// matching returns the recorded lines containing every one of subs.
func (r *logRecorder) matching(subs ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
next:
	for _, l := range r.lines {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// sharedRecorder adds attributes and records into the parent's lines.
type sharedRecorder struct {
	r     *logRecorder
	attrs []slog.Attr
}

func (s *sharedRecorder) Enabled(ctx context.Context, l slog.Level) bool { return s.r.Enabled(ctx, l) }
func (s *sharedRecorder) Handle(ctx context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(s.attrs...)
	return s.r.Handle(ctx, rec)
}
func (s *sharedRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &sharedRecorder{r: s.r, attrs: append(append([]slog.Attr{}, s.attrs...), as...)}
}
func (s *sharedRecorder) WithGroup(string) slog.Handler { return s }

// apiserverUp reports whether the API server answers /readyz with ok.
func apiserverUp(ctx context.Context, cs kubernetes.Interface) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil && strings.TrimSpace(string(body)) == "ok"
}

// poll checks cond until it holds or d passes.
func poll(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, what)
		}
	}
}

// text is a document's visible text with runs of space folded, for messages.
func text(doc *goquery.Document) string {
	return strings.Join(strings.Fields(doc.Find("main").Text()), " ")
}

// editorForm opens the editor of path (e.g. /csidrivers/x) and returns its
// form's fields as the browser would post them, and the apply URL.
func (c *console) editorForm(t *testing.T, path string) (url.Values, string) {
	t.Helper()
	code, doc := c.get(t, path+"/edit")
	if code != http.StatusOK {
		t.Fatalf("%s/edit: status %d: %s", path, code, text(doc))
	}
	v, action, err := readEditorForm(doc)
	if err != nil {
		t.Fatalf("%s/edit: %v", path, err)
	}
	return v, action
}

// readEditorForm returns the editor form's fields as the browser would post
// them, and its action.
func readEditorForm(doc *goquery.Document) (url.Values, string, error) {
	form := doc.Find(`[data-testid="editor-form"]`)
	action, ok := form.Attr("action")
	if !ok {
		return nil, "", fmt.Errorf("no editor form in: %.300s", text(doc))
	}
	v := url.Values{}
	form.Find("input[name]").Each(func(_ int, in *goquery.Selection) {
		if typ, _ := in.Attr("type"); (typ == "checkbox" || typ == "radio") && in.AttrOr("checked", "-") == "-" {
			return // the browser posts only checked boxes
		}
		name, _ := in.Attr("name")
		val, _ := in.Attr("value")
		v.Set(name, val)
	})
	v.Set("yaml", form.Find(`textarea[name="yaml"]`).Text())
	return v, action, nil
}
