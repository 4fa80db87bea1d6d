package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// decisionOf is a decision of a policy's version: the API server's event (and,
// for a person's, the console's record of the same decision).
func decisionOf(id string, sec int, csr, action string, ref ledger.PolicyRef, source string) ledger.Entry {
	return entry(id, sec, func(e *ledger.Entry) {
		e.Source, e.Name, e.UID, e.Action, e.Subresource, e.Policy = source, csr, "uid-"+csr, action, "approval", ref
	})
}

// PolicyVersions counts each version's decisions, each request once (a
// console decision is two entries), lists its newest decisions, leaves out
// other policies and entries naming none, and orders the versions newest
// generation first.
func TestPolicyVersionsCountsAndListsEachVersion(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		v1 := ledger.PolicyRef{Name: "kubelet-serving", Generation: 1, Hash: "aaaaaaaaaaaa"}
		v2 := ledger.PolicyRef{Name: "kubelet-serving", Generation: 2, Hash: "bbbbbbbbbbbb"}
		other := ledger.PolicyRef{Name: "kubelet-serving-2", Generation: 1, Hash: "aaaaaaaaaaaa"}
		var batch []ledger.Entry
		for i := range 5 {
			batch = append(batch, decisionOf(fmt.Sprint("a1-", i), i, fmt.Sprint("csr-a1-", i), ledger.ActionApprove, v1, ledger.SourceAPIServer))
		}
		batch = append(batch,
			decisionOf("d1", 10, "csr-d1", ledger.ActionDeny, v1, ledger.SourceAPIServer),
			// A person following v2 in the console: its record and the API server's event.
			decisionOf("p2", 20, "csr-p2", ledger.ActionApprove, v2, ledger.SourceConsole),
			decisionOf("p2", 20, "csr-p2", ledger.ActionApprove, v2, ledger.SourceAPIServer),
			decisionOf("o1", 21, "csr-o1", ledger.ActionApprove, other, ledger.SourceAPIServer),
			entry("plain", 22, func(e *ledger.Entry) { e.Action = ledger.ActionApprove }),
		)
		appendAll(t, s, batch...)
		got, err := s.(ledger.PolicyStore).PolicyVersions(context.Background(), "kubelet-serving", 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Versions) != 2 || got.Older != 0 {
			t.Fatalf("versions %+v, want 2", got)
		}
		g2, g1 := got.Versions[0], got.Versions[1]
		if g2.Generation != 2 || g2.Hash != v2.Hash || g2.Approved != 1 || g2.Denied != 0 || len(g2.Latest) != 1 || g2.Latest[0].Name != "csr-p2" {
			t.Errorf("generation 2: %+v", g2)
		}
		if g1.Generation != 1 || g1.Hash != v1.Hash || g1.Approved != 5 || g1.Denied != 1 || len(g1.Latest) != 3 {
			t.Fatalf("generation 1: %+v", g1)
		}
		if l := g1.Latest; l[0].Name != "csr-d1" || l[0].Action != ledger.ActionDeny || l[1].Name != "csr-a1-4" || l[2].Name != "csr-a1-3" || l[0].User != "alice" {
			t.Errorf("generation 1's latest: %+v", l)
		}
		if got, err := s.(ledger.PolicyStore).PolicyVersions(context.Background(), "no-such-policy", 3); err != nil || len(got.Versions) != 0 {
			t.Errorf("a policy without decisions: %+v, %v", got, err)
		}
	})
}

// More versions than MaxPolicyVersions: the newest are shown, the others counted.
func TestPolicyVersionsAreBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		var batch []ledger.Entry
		n := ledger.MaxPolicyVersions + 3
		for g := 1; g <= n; g++ {
			ref := ledger.PolicyRef{Name: "p", Generation: int64(g), Hash: fmt.Sprintf("%012x", g)}
			batch = append(batch, decisionOf(fmt.Sprint("e", g), g, fmt.Sprint("c", g), ledger.ActionApprove, ref, ledger.SourceAPIServer))
		}
		appendAll(t, s, batch...)
		got, err := s.(ledger.PolicyStore).PolicyVersions(context.Background(), "p", 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Versions) != ledger.MaxPolicyVersions || got.Older != 3 || got.Versions[0].Generation != int64(n) {
			t.Errorf("%d versions, %d older, newest %d", len(got.Versions), got.Older, got.Versions[0].Generation)
		}
	})
}
