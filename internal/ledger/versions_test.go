package ledger_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// versionEntries is one object's story told twice: by the API server's audit
// (or the console's records) and by the watch, each version once per source.
func versionEntries() (richer, watched []ledger.Entry) {
	obj := func(e *ledger.Entry) { e.Kind, e.Name, e.UID = "crds", "widgets.example.com", "uid-1" }
	watch := func(rv, action, diff string) func(*ledger.Entry) {
		return func(e *ledger.Entry) {
			e.Source, e.ID, e.RV, e.Action, e.Diff = ledger.SourceWatch, ledger.WatchID("uid-1", rv, action), rv, action, diff
			e.User, e.Verb, e.Code, e.Manager = "", "", 0, "kubectl-edit"
		}
	}
	richer = []ledger.Entry{
		// The API server's audit of version 5: no diff of its own.
		entry("api-5", 1, obj, func(e *ledger.Entry) { e.RV = "5" }),
		// The console's record of version 7, with its diff and user.
		entry("con-7", 4, obj, func(e *ledger.Entry) {
			e.Source, e.RV, e.User, e.Diff = ledger.SourceConsole, "7", "alice@example.com", "console diff of 7"
		}),
		// A dry run leaves no version: it never hides one.
		entry("api-dry-8", 5, obj, func(e *ledger.Entry) { e.RV, e.DryRun = "8", true }),
		// A refused write neither.
		entry("api-denied-9", 7, obj, func(e *ledger.Entry) { e.RV, e.Result, e.Code = "9", ledger.ResultDenied, 403 }),
		// A delete answers with a Status: no version to match, the action does.
		entry("api-del", 8, obj, func(e *ledger.Entry) { e.Action, e.Verb = ledger.ActionDelete, "delete" }),
	}
	watched = []ledger.Entry{
		entry("", 2, obj, watch("5", ledger.ActionUpdate, "watch diff of 5")),
		entry("", 3, obj, watch("6", ledger.ActionUpdate, "watch diff of 6")), // nobody else saw 6
		entry("", 4, obj, watch("7", ledger.ActionUpdate, "watch diff of 7")),
		entry("", 6, obj, watch("8", ledger.ActionUpdate, "watch diff of 8")),
		entry("", 8, obj, watch("10", ledger.ActionDelete, "watch diff of the delete")),
	}
	return richer, watched
}

type told struct{ ID, Source, User, Diff string }

func tell(es []ledger.Entry) []told {
	var out []told
	for _, e := range es {
		out = append(out, told{e.ID, e.Source, e.User, e.Diff})
	}
	return out
}

// An object's history shows each version once, the richer record winning
// and showing the watch's diff when it has none, whichever came first; the
// Go rule of the test stores agrees with the SQL.
func TestOnePerVersion(t *testing.T) {
	want := []told{
		{"api-5", ledger.SourceAPIServer, "alice", "watch diff of 5"},
		{ledger.WatchID("uid-1", "6", "update"), ledger.SourceWatch, "", "watch diff of 6"},
		{"con-7", ledger.SourceConsole, "alice@example.com", "console diff of 7"},
		{"api-dry-8", ledger.SourceAPIServer, "alice", ""},
		{ledger.WatchID("uid-1", "8", "update"), ledger.SourceWatch, "", "watch diff of 8"},
		{"api-denied-9", ledger.SourceAPIServer, "alice", ""},
		{"api-del", ledger.SourceAPIServer, "alice", "watch diff of the delete"},
	}
	for _, order := range []string{"audit first", "watch first"} {
		t.Run(order, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, dsn string) {
				s := open(t, dsn, ledger.Options{})
				richer, watched := versionEntries()
				if order == "audit first" {
					appendAll(t, s, richer...)
					appendAll(t, s, watched...)
				} else {
					appendAll(t, s, watched...)
					appendAll(t, s, richer...)
				}
				q := ledger.Query{Kind: "crds", Name: "widgets.example.com", Oldest: true, OnePerVersion: true}
				got := query(t, s, q).Entries
				if d := cmp.Diff(want, tell(got)); d != "" {
					t.Fatalf("one per version (-want +got):\n%s", d)
				}
				all := query(t, s, ledger.Query{Kind: "crds", Name: "widgets.example.com", Oldest: true}).Entries
				if len(all) != len(richer)+len(watched) {
					t.Fatalf("the zero query reads %d entries, want all %d", len(all), len(richer)+len(watched))
				}
				if d := cmp.Diff(tell(got), tell(ledger.OnePerVersion(all, all))); d != "" {
					t.Fatalf("Go's OnePerVersion disagrees with the SQL (-sql +go):\n%s", d)
				}
				// The list (newest first, paged) applies the same rule.
				var listed []ledger.Entry
				q = ledger.Query{OnePerVersion: true, Limit: 2}
				for {
					p := query(t, s, q)
					listed = append(listed, p.Entries...)
					if p.Next == "" {
						break
					}
					q.After = p.Next
				}
				if len(listed) != len(want) || listed[0].ID != "api-del" {
					t.Fatalf("list: %v", ids(listed))
				}
			})
		})
	}
}

// Replicas observe the same watch event and each appends its entry: the
// store keeps one (the same store code on one database: PostgreSQL for
// replicas, SQLite's file for consoles sharing a data directory).
func TestWatchEntryOfTwoReplicasIsStoredOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		a, b := open(t, dsn, ledger.Options{}), open(t, dsn, ledger.Options{})
		_, watched := versionEntries()
		var wg sync.WaitGroup
		added := make([]int, 2)
		errs := make([]error, 2)
		for i, s := range []ledger.Store{a, b} {
			wg.Go(func() { added[i], errs[i] = s.Append(context.Background(), watched) })
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("Append: %v, %v", errs[0], errs[1])
		}
		if added[0]+added[1] != len(watched) {
			t.Fatalf("the replicas added %d and %d entries of %d events", added[0], added[1], len(watched))
		}
		got := query(t, a, ledger.Query{Source: ledger.SourceWatch, Oldest: true}).Entries
		if len(got) != len(watched) {
			t.Fatalf("%d watch entries stored, want %d: %v", len(got), len(watched), ids(got))
		}
		if got[0].RV != "5" || got[0].Manager != "kubectl-edit" {
			t.Fatalf("version and manager not read back: %+v", got[0])
		}
	})
}
