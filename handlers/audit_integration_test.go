//go:build integration

package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// auditConsole is the console on the devcluster as one identity with the
// audit trail wired as main wires it: JSON lines into a buffer, Events with
// the admin identity (the console's own), and a ledger (SQLite) fed the
// console's records and the versions the cache's watch observes.
type auditConsole struct {
	*liveServer
	lines *syncBuffer
	store ledger.Store
}

func newAuditConsole(t *testing.T, identity string, readOnly bool) *auditConsole {
	t.Helper()
	cfg := testcluster.RestConfig(t, identity)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache, err := kube.NewCache(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	events, err := kube.NewEventWriter(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	lines := &syncBuffer{}
	rec := audit.New(audit.Options{Log: log, Lines: lines, Events: audit.KubeEvents(events), EventNamespace: "default"})
	store, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	console, watch := ingest.NewConsoleFeed(store, 0, log), ingest.NewWatchFeed(store, 0, log)
	rec.OnRecord(console.Record)
	cache.OnObject(watch.Enqueue)
	ctx, cancel := context.WithCancel(context.Background())
	var feeding sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		feeding.Wait()
		store.Close()
	})
	go rec.Run(ctx)
	feeding.Go(func() { console.Run(ctx) })
	feeding.Go(func() { watch.Run(ctx) })
	go cache.Run(ctx)
	waitFor(t, "cache ready", 30*time.Second, cache.Ready)
	editor, err := kube.NewEditor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ls := newLiveServerOn(t, cache, cfg, identity, readOnly, func(d *Deps) {
		d.Issuer, d.Editor, d.Audit, d.Ledger, d.Lookup = mustWriter(t, cfg), editor, rec, store, nil
	})
	return &auditConsole{liveServer: ls, lines: lines, store: store}
}

// history is an object's one history as its page reads it: oldest first,
// each version once.
func (ac *auditConsole) history(t *testing.T, kind kube.KindID, name string) []ledger.Entry {
	t.Helper()
	p, err := ac.store.Query(context.Background(), ledger.Query{Kind: string(kind), Name: name, Oldest: true, OnePerVersion: true, Limit: ledger.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return p.Entries
}

// records returns the audit lines about name.
func (ac *auditConsole) records(t *testing.T, name string) []audit.Record {
	t.Helper()
	var out []audit.Record
	sc := bufio.NewScanner(strings.NewReader(ac.lines.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line is not JSON: %q: %v", sc.Text(), err)
		}
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// eventsAbout reads back, with client-go, the Events about an object.
func eventsAbout(t *testing.T, name string, want int) []string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	var got []string
	waitFor(t, fmt.Sprintf("%d Events about %s", want, name), 20*time.Second, func() bool {
		list, err := cs.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("regarding.name", name).String()})
		if err != nil {
			t.Fatalf("list events: %v", err)
		}
		got = got[:0]
		for _, ev := range list.Items {
			if ev.ReportingController == kube.EventController {
				got = append(got, ev.Type+" "+ev.Reason+" "+ev.Action+": "+ev.Note)
			}
		}
		return len(got) >= want
	})
	return got
}

func TestAuditTrailRecordsCSRDecisions(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Approver, false)
	sess := ac.login(t)
	allowed := testcluster.CreateCSR(t, testcluster.CSR{Signer: "kubernetes.io/kube-apiserver-client"})
	refused := testcluster.CreateCSR(t, testcluster.CSR{Signer: "example.com/custom"})
	ac.waitCached(t, allowed, refused)

	if rec := ac.post(t, sess, "/csrs/"+allowed+"/approve", url.Values{"uid": {ac.uid(t, allowed)}, "message": {"ticket OPS-1"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("approve: status %d", rec.Code)
	}
	if rec := ac.post(t, sess, "/csrs/"+refused+"/approve", url.Values{"uid": {ac.uid(t, refused)}, "message": {"not mine"}}); rec.Code != http.StatusForbidden {
		t.Fatalf("approve for another signer: status %d, want 403", rec.Code)
	}

	ok := ac.records(t, allowed)
	if len(ok) != 1 {
		t.Fatalf("%d records for %s", len(ok), allowed)
	}
	r := ok[0]
	if line, err := json.Marshal(r); err == nil {
		t.Logf("audit line: %s", line)
	}
	if r.User != testcluster.Approver || r.Verb != "approve" || r.Result != audit.ResultOK || r.Reason != "ticket OPS-1" ||
		r.APIVersion != "certificates.k8s.io/v1" || r.UID == "" || r.RVBefore == "" || r.RVAfter == "" || r.RVBefore == r.RVAfter || r.DryRun ||
		r.Signer != "kubernetes.io/kube-apiserver-client" {
		t.Fatalf("record %+v", r)
	}
	if !strings.Contains(r.Diff, "+    type: Approved") || !strings.Contains(r.Diff, "ticket OPS-1") {
		t.Fatalf("diff does not show the approval:\n%s", r.Diff)
	}
	denied := ac.records(t, refused)
	if len(denied) != 1 || denied[0].Result != audit.ResultDenied || denied[0].Status != http.StatusForbidden || denied[0].ErrorReason != "Forbidden" ||
		denied[0].Signer != "example.com/custom" {
		t.Fatalf("refused decision: %+v", denied)
	}
	all := ac.lines.String()
	for _, secret := range []string{"BEGIN CERTIFICATE REQUEST", sess.Value, "LS0tLS1CRUdJTi"} {
		if strings.Contains(all, secret) {
			t.Fatalf("the audit lines contain %q", secret[:min(len(secret), 20)])
		}
	}

	evs := eventsAbout(t, allowed, 1)
	if !strings.HasPrefix(evs[0], "Normal ClusterdeskApprove Approve: approver approved CertificateSigningRequest "+allowed) ||
		!strings.Contains(evs[0], "reason: ticket OPS-1") {
		t.Fatalf("event %q", evs[0])
	}
	evs = eventsAbout(t, refused, 1)
	if !strings.HasPrefix(evs[0], "Warning ClusterdeskApproveDenied Approve: approver tried to approve CertificateSigningRequest "+refused) || !strings.Contains(evs[0], "denied (Forbidden)") {
		t.Fatalf("event %q", evs[0])
	}
}

func TestAuditTrailRecordsEditorWrites(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Admin, false)
	sess := ac.login(t)
	name := fmt.Sprintf("audit-%d.example.com", time.Now().UnixNano())
	yaml := "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: " + name + "\nspec:\n  attachRequired: false\n"
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	t.Cleanup(func() { _ = cs.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{}) })

	if rec := ac.post(t, sess, "/csidrivers/create", url.Values{"yaml": {yaml}, "op": {"preview"}}); rec.Code != http.StatusOK {
		t.Fatalf("preview: status %d", rec.Code)
	}
	if rec := ac.post(t, sess, "/csidrivers/create", url.Values{"yaml": {yaml}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("create: status %d: %s", rec.Code, rec.Body.String())
	}
	waitFor(t, "the cache to see the driver", 10*time.Second, func() bool { _, err := ac.cache.CSIDriver(name); return err == nil })
	// An update through the editor, from the form it shows.
	_, form, _ := ac.get(t, sess, "/csidrivers/"+name+"/edit")
	text := form.Find(`textarea[name="yaml"]`).Text()
	rvStart, _ := form.Find(`input[name="resourceVersion"]`).Attr("value")
	base, _ := form.Find(`input[name="base"]`).Attr("value")
	if !strings.Contains(text, "name: "+name) || rvStart == "" || base == "" {
		t.Fatalf("editor form: rv %q, base %d bytes, text:\n%s", rvStart, len(base), text)
	}
	text = strings.Replace(text, "metadata:\n", "metadata:\n  labels:\n    audited: \"yes\"\n", 1)
	if rec := ac.post(t, sess, "/csidrivers/"+name+"/apply", url.Values{"yaml": {text}, "resourceVersion": {rvStart}, "base": {base}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("apply: status %d: %s", rec.Code, rec.Body.String())
	}
	live, err := cs.StorageV1().CSIDrivers().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cache to see the update", 10*time.Second, func() bool {
		d, err := ac.cache.CSIDriver(name)
		return err == nil && d.ResourceVersion == live.ResourceVersion
	})
	if rec := ac.post(t, sess, "/csidrivers/"+name+"/delete", url.Values{"confirm": {name}, "uid": {string(live.UID)}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("delete: status %d", rec.Code)
	}

	var got []string
	for _, r := range ac.records(t, name) {
		got = append(got, fmt.Sprintf("%s dry=%v %s", r.Verb, r.DryRun, r.Result))
		if r.User != testcluster.Admin || r.Kind != "CSIDriver" {
			t.Errorf("record %+v", r)
		}
	}
	// Create runs the dry run again before the real write; so does delete.
	want := "[create dry=true ok create dry=true ok create dry=false ok update dry=true ok update dry=false ok delete dry=true ok delete dry=false ok]"
	if fmt.Sprint(got) != want {
		t.Fatalf("records %v, want %s", got, want)
	}
	recs := ac.records(t, name)
	created, updated, deleted := recs[2], recs[4], recs[6]
	if created.RVAfter != rvStart || !strings.Contains(created.Diff, "+  name: "+name) || created.UID != string(live.UID) {
		t.Fatalf("create record %+v", created)
	}
	if updated.RVBefore != rvStart || updated.RVAfter != live.ResourceVersion ||
		!strings.Contains(updated.Diff, "+  labels:\n+    audited: \"yes\"") || strings.Count(updated.Diff, "\n-") != 0 {
		t.Fatalf("update record %+v\n%s", updated, updated.Diff)
	}
	if deleted.RVBefore != live.ResourceVersion || !strings.Contains(deleted.Diff, "-  name: "+name) {
		t.Fatalf("delete record %+v", deleted)
	}
	// The propagation policy sent (the form's default) is on both delete records.
	if recs[5].Propagation != "Background" || deleted.Propagation != "Background" || created.Propagation != "" {
		t.Errorf("propagation on the records: dry run %q, delete %q, create %q", recs[5].Propagation, deleted.Propagation, created.Propagation)
	}
	evs := eventsAbout(t, name, 7) // one per record, dry runs included
	if !strings.Contains(strings.Join(evs, "\n"), "Normal ClusterdeskDelete Delete: admin deleted CSIDriver "+name+" via clusterdesk: ok") {
		t.Fatalf("events %q", evs)
	}
	// The one history credits each write to the signed-in user, once: the
	// console's record of the version wins over the watch's entry of it
	// (the watch saw all three: the create, the update, the delete).
	var steps []ledger.Entry
	waitFor(t, "the watch's three versions in the ledger", 10*time.Second, func() bool {
		p, err := ac.store.Query(context.Background(), ledger.Query{Kind: "csidrivers", Name: name, Source: ledger.SourceWatch})
		return err == nil && len(p.Entries) == 3
	})
	steps = ac.history(t, kube.CSIDrivers, name)
	var told []string
	for _, e := range steps {
		if e.DryRun {
			continue
		}
		told = append(told, e.Action+" "+e.Source+" "+e.User)
	}
	want = "[create console admin update console admin delete console admin]"
	if fmt.Sprint(told) != want {
		t.Fatalf("the history tells %v, want %s", told, want)
	}
}

// TestHistoryShowsAnotherClientsChange: a change made by another client
// (kubectl's writes, by client-go) shows in the object's one history, each
// version once with the diff between the versions observed, credited to its
// field manager; the ledger's observed versions list it and export it, and
// the object's managedFields now are on its history. (Was the in-memory
// activity view's TestActivityShowsAnotherClientsChange.)
func TestHistoryShowsAnotherClientsChange(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Auditor, true)
	sess := ac.login(t)
	name := fmt.Sprintf("activity-%d.example.com", time.Now().UnixNano())
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	attach := false
	d, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.CSIDriverSpec{AttachRequired: &attach}}, metav1.CreateOptions{FieldManager: "it-other-client"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.StorageV1().CSIDrivers().Delete(ctx, name, metav1.DeleteOptions{}) })
	waitFor(t, "the cache to see the driver", 10*time.Second, func() bool { _, err := ac.cache.CSIDriver(name); return err == nil })
	d.Labels = map[string]string{"team": "storage-audit"}
	if _, err := cs.StorageV1().CSIDrivers().Update(ctx, d, metav1.UpdateOptions{FieldManager: "it-relabeler"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ledger to hold the update", 10*time.Second, func() bool { return len(ac.history(t, kube.CSIDrivers, name)) >= 2 })

	code, doc, _ := ac.get(t, sess, "/ledger?kind=csidrivers&manager=it-relabeler&source=watch")
	if code != http.StatusOK {
		t.Fatalf("observed versions: status %d", code)
	}
	rows := doc.Find(`[data-testid="ledger-row"]`)
	if rows.Length() != 1 || !strings.Contains(rows.Text(), name) || rows.Find(`[data-testid="ledger-manager"]`).Text() != "it-relabeler" {
		t.Fatalf("observed rows (%d): %q", rows.Length(), rows.Text())
	}

	code, doc, _ = ac.get(t, sess, urls.LedgerObject(kube.CSIDrivers, name, ""))
	steps := doc.Find(`[data-testid="ledger-step"]`)
	if code != http.StatusOK || steps.Length() != 2 {
		t.Fatalf("history: status %d, %d steps", code, steps.Length())
	}
	if m := steps.Last().Find(`[data-testid="ledger-step-manager"]`).Text(); m != "it-relabeler" {
		t.Fatalf("the update credits %q", m)
	}
	added := steps.Last().Find(`[data-testid="diff-line"][data-kind="added"]`).Text()
	if !strings.Contains(added, "team: storage-audit") {
		t.Fatalf("the newest step's diff lacks the label: %q", added)
	}
	// The managedFields now: who last wrote which fields, also the creator.
	managers := doc.Find(`[data-testid="ledger-managers"]`).Text()
	if !strings.Contains(managers, "it-other-client") || !strings.Contains(managers, "it-relabeler") || !strings.Contains(managers, "metadata.labels.team") {
		t.Fatalf("managedFields now: %q", managers)
	}

	r := ac.getRaw(t, sess, "/ledger.csv?kind=csidrivers&manager=it-relabeler&source=watch")
	if !strings.Contains(r, name) || !strings.HasPrefix(r, "time,source,id") {
		t.Fatalf("CSV export:\n%s", r)
	}
}

func (ac *auditConsole) getRaw(t *testing.T, sess *http.Cookie, path string) string {
	t.Helper()
	r, _ := http.NewRequest(http.MethodGet, path, nil)
	r.AddCookie(sess)
	rec := ac.do(r)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: status %d", path, rec.Code)
	}
	return rec.Body.String()
}
