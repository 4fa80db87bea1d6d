//go:build integration

package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// newHeldAuditConsole is the console with the audit trail of main (JSON lines,
// Kubernetes Events as the admin) whose Event queue holds queue Events and
// whose Event writer starts only when start is called: until then the queue
// fills as it does behind a slow API server, with no timing involved.
func newHeldAuditConsole(t *testing.T, identity string, queue int) (ac *auditConsole, rec *audit.Recorder, start func()) {
	t.Helper()
	cfg := testcluster.RestConfig(t, identity)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	events, err := kube.NewEventWriter(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	lines := &syncBuffer{}
	rec = audit.New(audit.Options{Log: log, Lines: lines, Events: audit.KubeEvents(events), EventNamespace: "default", Queue: queue})
	ls := newLiveServerWith(t, cfg, identity, false, func(d *Deps) { d.Audit = rec })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &auditConsole{liveServer: ls, lines: lines}, rec, func() { go rec.Run(ctx) }
}

// TestBulkDecisionsOfMadeUpCSRsLeaveTheAuditTrailOfRealWrites is the flood:
// three bulk denials of a hundred made-up requests each (valid-looking
// selections, no such CSRs), then a real approval. Each made-up selection
// used to be decided, refused by the API server (not found) and recorded
// with a Warning Event, so the bounded Event queue was full of them and the
// real approval's Event was dropped. Now each flood is refused as a whole
// before anything is written or recorded (409, naming them), and the real
// approval's Event is on the API server.
func TestBulkDecisionsOfMadeUpCSRsLeaveTheAuditTrailOfRealWrites(t *testing.T) {
	ac, rec, start := newHeldAuditConsole(t, testcluster.Admin, 64)
	sess := ac.login(t)
	approved := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "real"})
	ac.waitCached(t, approved)

	madeUp := fmt.Sprintf("it-madeup-%d", time.Now().UnixNano())
	for round := range 3 {
		var refs []string
		for i := range 100 {
			refs = append(refs, fmt.Sprintf("%s/%s-%d-%03d", uuid.NewUUID(), madeUp, round, i))
		}
		code, doc := ac.bulkRefs(t, sess, "deny", refs...)
		banner := doc.Find(`[data-testid="bulk-unknown"]`)
		if code != http.StatusConflict || banner.Length() != 1 || !strings.Contains(squash(banner), madeUp) {
			t.Errorf("round %d of made-up selections: status %d, want 409 naming them: %.300s", round, code, squash(banner))
		}
	}
	if code, doc := ac.bulk(t, sess, "approve", approved); code != http.StatusOK {
		t.Fatalf("the real approval: status %d: %.300s", code, squash(doc.Selection))
	}

	start()
	got := eventsAbout(t, approved, 1)
	if !strings.Contains(got[0], "ClusterdeskApprove") {
		t.Errorf("the real approval's Event: %q", got)
	}
	// The Event writer is one goroutine taking the queue in order: the
	// made-up ones' Events, had any been queued, are written by now.
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	list, err := cs.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range list.Items {
		if strings.HasPrefix(ev.Regarding.Name, madeUp) {
			n++
		}
	}
	if n != 0 || strings.Contains(ac.lines.String(), madeUp) {
		t.Errorf("the made-up selections left %d Events and audit lines: %t", n, strings.Contains(ac.lines.String(), madeUp))
	}
	if d := rec.DroppedWrites(); d != 0 {
		t.Errorf("%d Events of writes dropped", d)
	}
}
