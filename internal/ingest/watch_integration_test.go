//go:build integration

package ingest

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// A CSR created, then approved with a plain client and issued by the
// controller manager, changes only its status after its creation (the API
// server keeps the spec). The watch's diffs in the ledger say so, although
// the console's cache keeps a decided request's spec.request as its summary
// (cmd/clusterdesk wires csr.Summarize, as here): the approval's diff showed
// spec.request changing from the PEM's digest to the summary's.
func TestWatchDiffsOfADecidedCSRHoldOnlyItsStatus(t *testing.T) {
	store := sqliteLedger(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache, err := kube.NewCache(testcluster.RestConfig(t, testcluster.Admin), log)
	if err != nil {
		t.Fatal(err)
	}
	cache.SummarizeDecidedRequests(csr.Summarize) // as the console does
	feed := NewWatchFeed(store, 0, log)
	cache.OnObject(feed.Enqueue)
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	running.Go(func() { feed.Run(ctx) })
	running.Go(func() { cache.Run(ctx) })
	t.Cleanup(func() { cancel(); running.Wait() })
	for deadline := time.Now().Add(30 * time.Second); !cache.Ready(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cache did not sync in 30 s")
		}
	}

	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "spec"})
	decide(t, admin, name, certificatesv1.CertificateApproved, "ItSpec", "approved by a plain client")

	// Wait for the watch's versions: created, approved, issued.
	var created ledger.Entry
	var changes []ledger.Entry
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		pg, err := store.Query(context.Background(), ledger.Query{Kind: "csrs", Name: name, Oldest: true, Limit: ledger.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		created, changes = ledger.Entry{}, nil
		issued := false
		for _, e := range pg.Entries {
			switch {
			case e.Source != ledger.SourceWatch:
			case e.Action == ledger.ActionCreate:
				created = e
			default:
				changes = append(changes, e)
				issued = issued || strings.Contains(e.Diff, "certificate:")
			}
		}
		if created.Diff != "" && issued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the watch recorded creation %v and %d changes, none issuing", created.Diff != "", len(changes))
		}
	}

	// Every line before status: in the created object's text is its
	// metadata and spec; a change to a CSR after its creation moves none.
	from := statusLine(t, created.Diff)
	approved := false
	for _, e := range changes {
		if out := changedBefore(e.Diff, from); len(out) > 0 {
			t.Errorf("the %s of version %s changes more than the status: %q\n%s", e.Action, e.RV, out, e.Diff)
		}
		approved = approved || strings.Contains(e.Diff, "ItSpec")
	}
	if !approved {
		t.Errorf("no diff shows the approval: %+v", changes)
	}
}

// statusLine is the line number of "status:" in a created object's text:
// its create diff adds every line.
func statusLine(t *testing.T, createDiff string) int {
	t.Helper()
	n := 0
	for _, l := range strings.Split(createDiff, "\n") {
		if !strings.HasPrefix(l, "+") || strings.HasPrefix(l, "+++") {
			continue
		}
		n++
		if strings.HasPrefix(l, "+status:") {
			return n
		}
	}
	t.Fatalf("no status in the created object:\n%s", createDiff)
	return 0
}

var hunk = regexp.MustCompile(`^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@`)

// changedBefore returns the lines a unified diff removes or adds before
// line from of the old or the new text.
func changedBefore(diff string, from int) []string {
	var out []string
	oldN, newN, inHunk := 0, 0, false
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if m := hunk.FindStringSubmatch(l); m != nil {
			oldN, _ = strconv.Atoi(m[1])
			newN, _ = strconv.Atoi(m[2])
			inHunk = true
			continue
		}
		switch {
		case !inHunk: // the ---/+++ header
		case strings.HasPrefix(l, "-"):
			if oldN < from {
				out = append(out, l)
			}
			oldN++
		case strings.HasPrefix(l, "+"):
			if newN < from {
				out = append(out, l)
			}
			newN++
		default:
			oldN++
			newN++
		}
	}
	return out
}
