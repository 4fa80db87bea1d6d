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
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/activity"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// auditConsole is the console on the devcluster as one identity with the
// audit trail wired as main wires it: JSON lines into a buffer, Events with
// the admin identity (the console's own), the activity store on the cache.
type auditConsole struct {
	*liveServer
	lines *syncBuffer
	store *activity.Store
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
	store := activity.NewStore(activity.Options{Log: log})
	cache.OnObject(func(ch kube.ObjectChange) {
		store.Enqueue(activity.Change{Kind: string(ch.Kind), Old: ch.Old, New: ch.New})
	})
	rec.OnRecord(store.Attributor(func(group, resource string) (string, bool) {
		k, ok := kube.KindByResource(group, resource)
		return string(k.ID), ok
	}))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go rec.Run(ctx)
	go store.Run(ctx)
	go cache.Run(ctx)
	waitFor(t, "cache ready", 30*time.Second, cache.Ready)
	editor, err := kube.NewEditor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ls := newLiveServerOn(t, cache, cfg, identity, readOnly, func(d *Deps) {
		d.Issuer, d.Editor, d.Audit, d.Activity, d.Lookup = mustWriter(t, cfg), editor, rec, store, nil
	})
	return &auditConsole{liveServer: ls, lines: lines, store: store}
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
	// The activity log credits the write to the signed-in user.
	waitFor(t, "the activity log to credit the creation", 10*time.Second, func() bool {
		for _, e := range ac.store.History("csidrivers", name) {
			if e.Op == activity.OpCreated && e.User == testcluster.Admin {
				return true
			}
		}
		return false
	})
}

func TestActivityShowsAnotherClientsChange(t *testing.T) {
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
	if _, err := cs.StorageV1().CSIDrivers().Update(ctx, d, metav1.UpdateOptions{FieldManager: "it-relabeler"}); err != nil && !apierrors.IsConflict(err) {
		t.Fatal(err)
	}
	waitFor(t, "the activity log to see the update", 10*time.Second, func() bool { return len(ac.store.History("csidrivers", name)) >= 2 })

	code, doc, _ := ac.get(t, sess, "/activity?kind=csidrivers&who=it-relabeler&source=watch")
	if code != http.StatusOK {
		t.Fatalf("activity: status %d", code)
	}
	rows := doc.Find(`[data-testid="activity-row"]`)
	if rows.Length() != 1 || !strings.Contains(rows.Text(), name) || !strings.Contains(rows.Text(), "metadata.labels.team") {
		t.Fatalf("activity rows (%d): %q", rows.Length(), rows.Text())
	}
	code, doc, _ = ac.get(t, sess, "/activity?kind=csidrivers&source=managedFields&who=it-other-client")
	if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="activity-row"]`).Text(), name) {
		t.Fatalf("managedFields rows: status %d", code)
	}

	code, doc, _ = ac.get(t, sess, "/csidrivers/"+name+"/history")
	if code != http.StatusOK || doc.Find(`[data-testid="history-entry"]`).Length() != 2 {
		t.Fatalf("history: status %d, %d entries", code, doc.Find(`[data-testid="history-entry"]`).Length())
	}
	added := doc.Find(`[data-testid="history-entry"]`).First().Find(`[data-testid="diff-line"][data-kind="added"]`).Text()
	if !strings.Contains(added, "team: storage-audit") {
		t.Fatalf("the newest entry's diff lacks the label: %q", added)
	}

	r := ac.getRaw(t, sess, "/activity.csv?kind=csidrivers&who=it-relabeler")
	if !strings.Contains(r, name) || !strings.HasPrefix(r, "time,kind,name") {
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
