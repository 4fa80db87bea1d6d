package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// entry is a console-shaped entry at t0 plus sec seconds; change adjusts it.
func entry(id string, sec int, change ...func(*ledger.Entry)) ledger.Entry {
	e := ledger.Entry{
		Source: ledger.SourceAPIServer, ID: id, Time: t0.Add(time.Duration(sec) * time.Second),
		User: "alice", Verb: "update", Action: ledger.ActionUpdate,
		APIGroup: "certificates.k8s.io", APIVersion: "v1", Resource: "certificatesigningrequests",
		Kind: "csrs", Name: "csr-1", Code: 200, Result: ledger.ResultOK,
	}
	for _, c := range change {
		c(&e)
	}
	return e
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

func appendAll(t *testing.T, s ledger.Store, entries ...ledger.Entry) {
	t.Helper()
	n, err := s.Append(context.Background(), entries)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if n != len(entries) {
		t.Fatalf("Append added %d, want %d", n, len(entries))
	}
}

func ids(entries []ledger.Entry) []string {
	var out []string // nil when there are none
	for _, e := range entries {
		out = append(out, e.ID)
	}
	return out
}

func query(t *testing.T, s ledger.Store, q ledger.Query) ledger.Page {
	t.Helper()
	p, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("Query(%+v): %v", q, err)
	}
	return p
}

func TestAppendStoresEveryFieldAndIgnoresWhatIsStored(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		ctx := context.Background()
		full := ledger.Entry{
			Source: ledger.SourceConsole, ID: "rec-1", AuditID: "6b3c3d0e-0d4c-4c8e-9f1a-2d3e4f5a6b7c", Time: t0.Add(-time.Hour + 123456789),
			User: "bob", Groups: []string{"system:authenticated", "admins"}, Impersonator: "system:serviceaccount:clusterdesk:console",
			UserAgent: "clusterdesk/1", SourceIPs: []string{"10.0.0.1", "::1"},
			Verb: "update", Action: ledger.ActionApprove, APIGroup: "certificates.k8s.io", APIVersion: "v1",
			Resource: "certificatesigningrequests", Subresource: "approval", Kind: "csrs", Name: "node-csr-x", UID: "u-1",
			Signer: "kubernetes.io/kube-apiserver-client-kubelet", Code: 201, Result: ledger.ResultOK,
			Reason: "KubeletApproved: auto", DryRun: true, Object: []byte(`{"kind":"CertificateSigningRequest"}`),
			Diff: "--- a\n+++ b\n", Policy: ledger.PolicyRef{Name: "kubelet-serving", Generation: 3, Hash: "1a2b3c4d5e6f"},
		}
		dropped := entry("ev-2", 1, func(e *ledger.Entry) { e.Kind, e.ObjectDropped = "crds", true })
		batch := []ledger.Entry{full, dropped, entry("ev-3", 2)}

		if n, err := s.Append(ctx, batch); err != nil || n != 3 {
			t.Fatalf("first Append = %d, %v; want 3", n, err)
		}
		if n, err := s.Append(ctx, batch); err != nil || n != 0 {
			t.Fatalf("the same batch again = %d, %v; want 0", n, err)
		}
		retried := append(batch, entry("ev-4", 3))
		if n, err := s.Append(ctx, retried); err != nil || n != 1 {
			t.Fatalf("the batch retried with one new entry = %d, %v; want 1", n, err)
		}
		// An entry twice in one batch (past one INSERT's rows) is stored once.
		var twice []ledger.Entry
		for i := range 150 {
			twice = append(twice, entry(fmt.Sprintf("dup-%03d", i), 100))
		}
		twice = append(twice, twice[0], twice[149])
		if n, err := s.Append(ctx, twice); err != nil || n != 150 {
			t.Fatalf("a batch of 150 with two entries twice = %d, %v; want 150", n, err)
		}
		if n, err := s.Append(ctx, twice[100:]); err != nil || n != 0 {
			t.Fatalf("part of it again = %d, %v; want 0", n, err)
		}
		// The same ID from the other source is another entry.
		if n, err := s.Append(ctx, []ledger.Entry{entry("rec-1", 4)}); err != nil || n != 1 {
			t.Fatalf("rec-1 from the API server = %d, %v; want 1", n, err)
		}

		got := query(t, s, ledger.Query{Oldest: true, Until: t0.Add(100 * time.Second)})
		want := []ledger.Entry{full, dropped, entry("ev-3", 2), entry("ev-4", 3), entry("rec-1", 4)}
		if diff := cmp.Diff(want, got.Entries); diff != "" {
			t.Errorf("stored entries (-want +got):\n%s", diff)
		}
	})
}

func TestAppendRefusesEntriesItCouldNotFindAgain(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		for name, e := range map[string]ledger.Entry{
			"no source":      entry("a", 0, func(e *ledger.Entry) { e.Source = "" }),
			"no id":          entry("", 0),
			"no time":        entry("a", 0, func(e *ledger.Entry) { e.Time = time.Time{} }),
			"object too big": entry("a", 0, func(e *ledger.Entry) { e.Object = make([]byte, ledger.MaxObjectBytes+1) }),
		} {
			if _, err := s.Append(context.Background(), []ledger.Entry{entry("ok", 0), e}); err == nil {
				t.Errorf("%s: Append accepted it", name)
			}
		}
		if got := query(t, s, ledger.Query{}); len(got.Entries) != 0 {
			t.Errorf("a refused batch stored %v", ids(got.Entries))
		}
	})
}

func TestQueryShapes(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		kubelet := "kubernetes.io/kube-apiserver-client-kubelet"
		appendAll(t, s,
			entry("create", 0, func(e *ledger.Entry) {
				e.Action, e.UID, e.User, e.Signer = ledger.ActionCreate, "u1", "system:node:a", kubelet
			}),
			entry("approve", 10, func(e *ledger.Entry) { e.Action, e.UID, e.Signer = ledger.ActionApprove, "u1", kubelet }),
			entry("issue", 20, func(e *ledger.Entry) {
				e.Action, e.UID, e.User, e.Signer = ledger.ActionIssue, "u1", "system:kube-controller-manager", kubelet
			}),
			entry("delete", 30, func(e *ledger.Entry) { e.Action, e.UID, e.Signer = ledger.ActionDelete, "u1", kubelet }),
			// The name again, another incarnation.
			entry("recreate", 40, func(e *ledger.Entry) { e.Action, e.UID, e.User = ledger.ActionCreate, "u2", "system:node:a" }),
			entry("other-csr", 5, func(e *ledger.Entry) { e.Name, e.Action, e.Signer = "csr-2", ledger.ActionDeny, kubelet }),
			entry("denied", 15, func(e *ledger.Entry) { e.Name, e.Result, e.Code = "csr-2", ledger.ResultDenied, 403 }),
			entry("crd", 25, func(e *ledger.Entry) {
				e.Kind, e.Name, e.Resource = "crds", "widgets.example.com", "customresourcedefinitions"
			}),
			entry("console", 35, func(e *ledger.Entry) { e.Source, e.Kind, e.Name = ledger.SourceConsole, "flowschemas", "fs" }),
		)
		for _, c := range []struct {
			name string
			q    ledger.Query
			want []string
		}{
			{"everything, newest first", ledger.Query{},
				[]string{"recreate", "console", "delete", "crd", "issue", "denied", "approve", "other-csr", "create"}},
			{"one object's story, oldest first", ledger.Query{Kind: "csrs", Name: "csr-1", Oldest: true},
				[]string{"create", "approve", "issue", "delete", "recreate"}},
			{"one incarnation", ledger.Query{Kind: "csrs", Name: "csr-1", UID: "u1"},
				[]string{"delete", "issue", "approve", "create"}},
			{"a user", ledger.Query{User: "system:node:a"}, []string{"recreate", "create"}},
			{"a signer", ledger.Query{Signer: kubelet, Oldest: true}, []string{"create", "other-csr", "approve", "issue", "delete"}},
			{"actions", ledger.Query{Actions: []string{ledger.ActionApprove, ledger.ActionDeny}}, []string{"approve", "other-csr"}},
			{"a user's actions", ledger.Query{User: "alice", Actions: []string{ledger.ActionDelete}}, []string{"delete"}},
			{"result", ledger.Query{Result: ledger.ResultDenied}, []string{"denied"}},
			{"source", ledger.Query{Source: ledger.SourceConsole}, []string{"console"}},
			{"kinds the viewer may list", ledger.Query{Kinds: []string{"crds", "flowschemas"}}, []string{"console", "crd"}},
			{"no kind at all", ledger.Query{Kinds: []string{}}, nil},
			{"a kind outside the viewer's kinds", ledger.Query{Kind: "crds", Kinds: []string{"csrs"}}, nil},
			{"since is inclusive, until exclusive", ledger.Query{Since: t0.Add(10 * time.Second), Until: t0.Add(30 * time.Second)},
				[]string{"crd", "issue", "denied", "approve"}},
			{"a user in a time window", ledger.Query{User: "alice", Since: t0.Add(11 * time.Second), Oldest: true},
				[]string{"denied", "crd", "delete", "console"}},
			{"a limit", ledger.Query{Limit: 2}, []string{"recreate", "console"}},
		} {
			got := query(t, s, c.q)
			if diff := cmp.Diff(c.want, ids(got.Entries)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, diff)
			}
		}
	})
}

// TestPagingHasNoDuplicateOrGapWhileAppending pages through more than one page
// in both orders while entries arrive between pages, some at the same instant
// as a page's last row: every entry that was there at the start is read once,
// in order.
func TestPagingHasNoDuplicateOrGapWhileAppending(t *testing.T) {
	for _, oldest := range []bool{false, true} {
		t.Run(fmt.Sprintf("oldest=%v", oldest), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, dsn string) {
				s := open(t, dsn, ledger.Options{})
				var start []ledger.Entry
				for i := range 23 {
					start = append(start, entry(fmt.Sprintf("e%02d", i), i/3)) // three entries per second
				}
				appendAll(t, s, start...)

				seen := map[string]int{}
				var order []string
				q := ledger.Query{Limit: 5, Oldest: oldest}
				for page := 0; ; page++ {
					if page > 20 {
						t.Fatal("paging does not end")
					}
					p := query(t, s, q)
					if len(p.Entries) > 5 {
						t.Fatalf("page of %d entries, limit 5", len(p.Entries))
					}
					for _, e := range p.Entries {
						seen[e.ID]++
						order = append(order, e.ID)
					}
					if p.Next == "" {
						break
					}
					// New entries: one at the last row's instant, one
					// newer than everything, one older than everything.
					last := p.Entries[len(p.Entries)-1]
					appendAll(t, s,
						entry(fmt.Sprintf("same-%d", page), 0, func(e *ledger.Entry) { e.Time = last.Time }),
						entry(fmt.Sprintf("newer-%d", page), 1000+page),
						entry(fmt.Sprintf("older-%d", page), -1000-page),
					)
					q.After = p.Next
				}
				for _, e := range start {
					if seen[e.ID] != 1 {
						t.Errorf("%s read %d times", e.ID, seen[e.ID])
					}
				}
				for id, n := range seen {
					if n != 1 {
						t.Errorf("%s read %d times", id, n)
					}
				}
				// The entries of the start keep their order among what was read.
				var got []string
				for _, id := range order {
					if id[0] == 'e' {
						got = append(got, id)
					}
				}
				want := ids(start)
				if !oldest {
					for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
						want[i], want[j] = want[j], want[i]
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("order (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestMalformedCursorIsAnError(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		for i := range 3 {
			appendAll(t, s, entry(fmt.Sprint(i), i))
		}
		next := query(t, s, ledger.Query{Limit: 1}).Next
		if next == "" {
			t.Fatal("no next page")
		}
		for _, bad := range []string{"x", "%%%", next[:len(next)-2], "MS54LjEuMQ", "Mi5uLjEuMg", "MS5uLngueA", "MS5uLjEuLTE", "MS5uLjE"} {
			_, err := s.Query(context.Background(), ledger.Query{Limit: 1, After: bad})
			if !errors.Is(err, ledger.ErrBadCursor) {
				t.Errorf("cursor %q: err = %v, want ErrBadCursor", bad, err)
			}
		}
		// A newest-first cursor does not continue an oldest-first query.
		if _, err := s.Query(context.Background(), ledger.Query{Limit: 1, After: next, Oldest: true}); !errors.Is(err, ledger.ErrBadCursor) {
			t.Errorf("a cursor of the other order: err = %v, want ErrBadCursor", err)
		}
		if p := query(t, s, ledger.Query{Limit: 1, After: next}); len(p.Entries) != 1 || p.Entries[0].ID != "1" {
			t.Errorf("the good cursor continued with %v", ids(p.Entries))
		}
	})
}

func TestExportStreamsUntilAskedToStop(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		var all []ledger.Entry
		for i := range 1200 { // more than MaxLimit: no page bounds an export
			all = append(all, entry(fmt.Sprintf("e%04d", i), i, func(e *ledger.Entry) {
				if i%2 == 1 {
					e.User = "bob"
				}
			}))
		}
		appendAll(t, s, all...)
		ctx := context.Background()

		var got []string
		q := ledger.Query{User: "bob", Oldest: true, Limit: 10, After: "ignored"}
		if err := s.Export(ctx, q, func(e ledger.Entry) error { got = append(got, e.ID); return nil }); err != nil {
			t.Fatalf("Export: %v", err)
		}
		if len(got) != 600 || got[0] != "e0001" || got[599] != "e1199" {
			t.Errorf("exported %d entries, %s…%s; want 600, e0001…e1199", len(got), got[0], got[len(got)-1])
		}

		stop := errors.New("client gone")
		n := 0
		err := s.Export(ctx, ledger.Query{}, func(ledger.Entry) error {
			if n++; n == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || n != 3 {
			t.Errorf("Export after each failed: %v after %d entries, want the error after 3", err, n)
		}

		cctx, cancel := context.WithCancel(ctx)
		n = 0
		err = s.Export(cctx, ledger.Query{}, func(ledger.Entry) error {
			if n++; n == 5 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) || n > 6 {
			t.Errorf("Export with ctx cancelled: %v after %d entries, want context.Canceled after 5", err, n)
		}
	})
}

func TestPruneDeletesOnlyOlderEntries(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		// Three prune chunks of 500 (500, 500, 100); the default chunk
		// would need 12,000 entries for the same proof.
		ledger.SetPruneChunk(s, 500)
		var batch []ledger.Entry
		for i := range 1200 {
			batch = append(batch, entry(fmt.Sprintf("e%05d", i), i))
			if len(batch) == 400 {
				appendAll(t, s, batch...)
				batch = batch[:0]
			}
		}
		n, err := s.Prune(context.Background(), t0.Add(1100*time.Second))
		if err != nil || n != 1100 {
			t.Fatalf("Prune = %d, %v; want 1100", n, err)
		}
		st, err := s.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Entries != 100 || !st.Oldest.Equal(t0.Add(1100*time.Second)) {
			t.Errorf("after Prune: %d entries, oldest %s; want 100 from %s", st.Entries, st.Oldest, t0.Add(1100*time.Second))
		}
		if n, err := s.Prune(context.Background(), t0); err != nil || n != 0 {
			t.Errorf("Prune of nothing = %d, %v", n, err)
		}
	})
}

func TestStats(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{Retention: 90 * 24 * time.Hour})
		ctx := context.Background()
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		backend := dsn[:6] // "sqlite" or "postgr"
		if want := (ledger.Stats{Backend: st.Backend, Retention: 90 * 24 * time.Hour}); st != want || st.Backend[:6] != backend {
			t.Errorf("empty: %+v", st)
		}
		appendAll(t, s, entry("b", 5), entry("a", -5), entry("c", 1))
		st, err = s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Entries != 3 || !st.Oldest.Equal(t0.Add(-5*time.Second)) || !st.Newest.Equal(t0.Add(5*time.Second)) {
			t.Errorf("three entries: %+v", st)
		}
		if err := s.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}
