package csrqueue

import (
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

const (
	clientSigner  = certificatesv1.KubeAPIServerClientSignerName
	kubeletClient = certificatesv1.KubeAPIServerClientKubeletSignerName
	kubeletServe  = certificatesv1.KubeletServingSignerName
)

func TestGroupStorms(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	p := func(name, signer, subject, user string, min int) Member {
		return Member{Name: name, UID: "uid-" + name, Signer: signer, Subject: subject, Requester: user, Created: t0.Add(time.Duration(min) * time.Minute)}
	}
	s := GroupStorms([]Member{
		p("c", clientSigner, "CN=jane", "jane", 3),
		p("a", clientSigner, "CN=jane", "jane", 1),
		p("b", clientSigner, "CN=jane", "jane", 1), // same second as a: the name orders them
		p("by-admin", clientSigner, "CN=jane", "admin", 0),
		p("serving", kubeletServe, "CN=system:node:w,O=system:nodes", "system:node:w", 0),
		p("client", kubeletClient, "CN=system:node:w,O=system:nodes", "system:node:w", 0),
		p("bob", clientSigner, "CN=bob", "bob", 0),
	})
	st := s.Of("c")
	if st == nil || s.Len() != 1 {
		t.Fatalf("one storm of jane's three requests, got %d storms, c in %v", s.Len(), st)
	}
	var names []string
	for _, m := range st.Members {
		names = append(names, m.Name)
	}
	if fmt.Sprint(names) != "[a b c]" || st.Newest().Name != "c" || st.Oldest().Name != "a" {
		t.Errorf("members oldest first: %v", names)
	}
	if s.ByID(st.ID) != st || len(st.ID) != 14 || st.ID[:2] != "s-" {
		t.Errorf("storm ID %q", st.ID)
	}
	// The same subject asked by another user is a duplicate but not the storm;
	// the same subject under two signers is neither.
	for _, name := range []string{"by-admin", "serving", "client", "bob", "unknown"} {
		if s.Of(name) != nil {
			t.Errorf("%s is in no storm", name)
		}
	}
	if n, id := s.Duplicates("by-admin"); n != 3 || id == "" || !s.InSet(id, "a") || s.InSet(st.ID, "by-admin") {
		t.Errorf("by-admin has 3 duplicates (%d, %q); the duplicate set holds a, the storm not by-admin", n, id)
	}
	if n, _ := s.Duplicates("a"); n != 3 {
		t.Errorf("a has 3 duplicates, got %d", n)
	}
	for _, name := range []string{"serving", "client", "bob"} {
		if n, id := s.Duplicates(name); n != 0 || id != "" {
			t.Errorf("%s has no duplicates, got %d %q", name, n, id)
		}
	}
	var nilStorms *Storms
	if nilStorms.Of("a") != nil || nilStorms.Len() != 0 || nilStorms.InSet("x", "a") {
		t.Error("a nil index knows nothing")
	}
}

// TestGroupStormsLinear: a storm of thousands is one storm whose members are
// held once, not a list of the others per member.
func TestGroupStormsLinear(t *testing.T) {
	const n = 5000
	ps := make([]Member, n)
	for i := range ps {
		ps[i] = Member{Name: fmt.Sprintf("storm-%04d", i), Signer: kubeletClient, Subject: "CN=system:node:x,O=system:nodes", Requester: "system:node:x"}
	}
	s := GroupStorms(ps)
	if st := s.Of("storm-0000"); st == nil || len(st.Members) != n || s.Len() != 1 {
		t.Fatalf("one storm of %d", n)
	}
	if d, _ := s.Duplicates("storm-4999"); d != n-1 {
		t.Errorf("duplicates %d", d)
	}
	allocs := testing.AllocsPerRun(3, func() { GroupStorms(ps) })
	// Map growth allocates a few times per doubling; one list per request
	// (what the old duplicates map did) would be thousands.
	if allocs > n/10 {
		t.Errorf("grouping %d requests allocated %.0f times; it should not allocate per request", n, allocs)
	}
}
