package csrqueue

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// dupCountingWords is benchWords counting how often it words a duplicates
// finding.
type dupCountingWords struct {
	benchWords
	dups *atomic.Int64
}

func (w dupCountingWords) Findings(fs []csr.Finding) string {
	for _, f := range fs {
		if f.Check == "duplicate" {
			w.dups.Add(1)
		}
	}
	return w.benchWords.Findings(fs)
}

// TestFilterWordsTheDuplicatesFindingOncePerCount: the text filter over a
// storm words its requests' duplicates finding once for the view, not once
// per request (all have one count), and still finds it in each of them.
func TestFilterWordsTheDuplicatesFindingOncePerCount(t *testing.T) {
	const n = 50
	q := New(&source{items: pending(t, n)})
	var dups atomic.Int64
	env := Env{Now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), Checks: q.Checks(), Words: dupCountingWords{dups: &dups},
		PageSize: 100, Cache: q.Facts()}
	res, err := q.Run(Query{Filter: "no such text"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != 0 {
		t.Fatalf("%d matched a text no row shows", res.Matched)
	}
	if got := dups.Load(); got != 1 {
		t.Errorf("the filter worded the duplicates finding %d times over a storm of %d, want once", got, n)
	}
	res, err = q.Run(Query{Filter: "49 other pending"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != n {
		t.Errorf("the duplicates finding matched %d of the storm's %d requests", res.Matched, n)
	}
}
