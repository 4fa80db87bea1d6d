//go:build !race

// Property and memory tests of the queue engine, on one goroutine:
// scripts/go-test-unit.sh runs them without the race detector, which only
// slowed them (6 s of the package's 9 on an idle machine).

package csrqueue

import (
	"fmt"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// A decided request is decoded when a view needs it (its row, its search
// text, its findings) and not kept decoded: its facts keep the text and the
// findings' rank, not the findings; the large memo holds only the pending
// requests, and the decided ones' memo stays small however many a text
// filter or the sort by checks read.
func TestDecidedRequestsAreNotKeptDecoded(t *testing.T) {
	src := &gettingSource{}
	g := newPropGen(t, 7)
	for range 3 * DecidedDecodesKept {
		c := g.csr()
		c.Spec.Request = testfixtures.SubjectPEM(t, c.Name) // each its own body, as in a cluster
		src.items = append(src.items, c)
	}
	q := New(src)
	env := Env{Now: g.now, Checks: q.Checks(), Words: propWords{}, PageSize: 25}
	if _, err := q.Run(Query{Sort: SortChecks}, env); err != nil { // ranks every request's findings
		t.Fatal(err)
	}
	res, err := q.Run(Query{Filter: "csr-"}, env) // reads every request's text
	if err != nil || res.Matched != len(src.items) {
		t.Fatalf("the filter matches every CSR: %d of %d, %v", res.Matched, len(src.items), err)
	}
	for _, it := range res.Items {
		if req, err := it.Request(); req == nil && err == nil {
			t.Errorf("%s: a shown row's request is decoded on demand", it.CSR.Name)
		}
	}
	var pending, decided int
	for _, e := range q.facts.x.byName {
		if e.f.state() == Pending {
			pending++
			continue
		}
		decided++
		if e.f.pending != nil || e.f.shared == "" {
			t.Fatalf("%s (%s): decoded request and findings kept %v, text %q", e.obj.Name, e.f.state(), e.f.pending != nil, e.f.own+e.f.shared)
		}
	}
	if decided < DecidedDecodesKept || q.decodes.Len() > pending {
		t.Errorf("%d decided, %d pending: the large memo holds %d decodings", decided, pending, q.decodes.Len())
	}
	if q.decided.Len() > DecidedDecodesKept {
		t.Errorf("the decided requests' memo holds %d, more than %d", q.decided.Len(), DecidedDecodesKept)
	}
}

// TestIndexedQueueMatchesTheOracle holds the indexed engine to the engine it
// replaced (oracle_test.go) over random clusters and random views, with
// random changes (new requests, decisions, other updates, deletions) applied
// between rounds. Three engines see the same calls: the oracle, Run over a
// Cache given the whole list each time, and a Queue that follows the
// source's reported changes without listing. Each round also compares what a
// live update sends for the changed names.
func TestIndexedQueueMatchesTheOracle(t *testing.T) {
	seeds, rounds := 12, 25
	if testing.Short() {
		seeds = 4
	}
	// The random sets must hold the shapes whose changes are hardest to
	// follow: requester storms that form and that fall apart.
	var formed, fellApart int
	defer func() {
		if !t.Failed() && (formed == 0 || fellApart == 0) {
			t.Errorf("no requester storm formed (%d rounds) or fell apart (%d): the generator no longer covers them", formed, fellApart)
		}
	}()
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			g := newPropGen(t, uint64(seed))
			src := &gettingSource{}
			for range 20 + g.r.IntN(60) {
				src.items = append(src.items, g.csr())
			}
			follow := New(src)
			checks := follow.Checks()
			oracle := &oracleCache{}
			diff := &Cache{}
			for round := range rounds {
				var changed []string
				if round > 0 {
					changed = g.change(src)
				}
				env := Env{Now: g.now, Checks: checks, Words: propWords{}, PageSize: 1 + g.r.IntN(7),
					MayDecide: func(s string) bool { return s == kubeletServe }}
				want := describeChange(oracleLive(src.items, changed, oracleEnv{env, oracle}))
				denv := env
				denv.Cache = diff
				if got := describeChange(Live(src.items, changed, denv)); got != want {
					t.Fatalf("round %d: live over the list of %v:\n%s\nthe oracle:\n%s", round, changed, got, want)
				}
				ch, err := follow.Live(changed, env)
				if err != nil {
					t.Fatal(err)
				}
				if got := describeChange(ch); got != want {
					t.Fatalf("round %d: live following changes of %v:\n%s\nthe oracle:\n%s", round, changed, got, want)
				}
				if requesterStorms(oracle.storms) > 0 {
					formed++
				}
				if requesterStorms(oracle.before) > requesterStorms(oracle.storms) {
					fellApart++
				}
				for range 12 {
					q := g.query(oracle.storms)
					env.Labels = g.labels()
					want := describe(oracleRun(src.items, q, oracleEnv{env, oracle}))
					denv := env
					denv.Cache = diff
					if got := describe(Run(src.items, q, denv)); got != want {
						t.Fatalf("round %d, %+v (labels %v): over the list:\n%s\nthe oracle:\n%s", round, q, env.Labels, got, want)
					}
					res, err := follow.Run(q, env)
					if err != nil {
						t.Fatal(err)
					}
					if got := describe(res); got != want {
						t.Fatalf("round %d, %+v (labels %v): following changes:\n%s\nthe oracle:\n%s", round, q, env.Labels, got, want)
					}
				}
			}
			if src.lists != 1 {
				t.Errorf("the following queue listed %d times; once is its first view", src.lists)
			}
		})
	}
}
