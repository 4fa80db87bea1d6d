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
	for _, m := range st.Members() {
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
	if st := s.Of("storm-0000"); st == nil || len(st.Members()) != n || s.Len() != 1 {
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

// TestRequesterStorms: one requester asking one signer for many different
// subjects (automation gone wrong) is one group, its retry storms inside it;
// below RequesterStormMin, or with one subject, it is not.
func TestRequesterStorms(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var ps []Member
	add := func(name, signer, subject, user string, min int) {
		ps = append(ps, Member{Name: name, UID: "uid-" + name, Signer: signer, Subject: subject, Requester: user, Created: t0.Add(time.Duration(min) * time.Minute)})
	}
	const runaway = "system:serviceaccount:certs:issuer"
	for i := range RequesterStormMin - 2 {
		add(fmt.Sprintf("auto-%02d", i), clientSigner, fmt.Sprintf("CN=svc-%d", i), runaway, i)
	}
	// A retry storm of the same requester: inside the requester storm.
	add("retry-a", clientSigner, "CN=svc-0", runaway, 100)
	add("retry-b", clientSigner, "CN=svc-0", runaway, 101)
	// The same requester for another signer, and another requester.
	add("other-signer", kubeletServe, "CN=svc-1", runaway, 0)
	add("other-user", clientSigner, "CN=svc-1", "jane", 0)
	// A few nodes joining with one token: ordinary work, below the minimum.
	for i := range 5 {
		add(fmt.Sprintf("join-%d", i), kubeletClient, fmt.Sprintf("CN=system:node:n%d,O=system:nodes", i), "system:bootstrap:abcdef", i)
	}
	// A person asking for many colleagues' certificates: each on purpose,
	// each its own row, however many.
	for i := range 3 * RequesterStormMin {
		add(fmt.Sprintf("human-%02d", i), clientSigner, fmt.Sprintf("CN=colleague-%d", i), "kubernetes-admin", i)
	}

	s := GroupStorms(ps)
	st := s.Of("auto-00")
	if st == nil || !st.ByRequester || s.Len() != 1 {
		t.Fatalf("one requester storm, got %d storms, auto-00 in %+v", s.Len(), st)
	}
	if len(st.Members()) != RequesterStormMin || st.Subjects != RequesterStormMin-2 || st.Key != (StormKey{Signer: clientSigner, Requester: runaway}) {
		t.Errorf("members %d, subjects %d, key %+v", len(st.Members()), st.Subjects, st.Key)
	}
	if st.ID != RequesterStormID(clientSigner, runaway) || st.ID[:2] != "r-" || !ValidGroupID(st.ID) {
		t.Errorf("ID %q", st.ID)
	}
	if s.Of("retry-a") != st || s.Of("retry-b") != st || st.Newest().Name != "retry-b" || st.Oldest().Name != "auto-00" {
		t.Errorf("the retry storm is inside the requester storm, oldest first: %v", st.Members())
	}
	if s.ByID(StormID(StormKey{clientSigner, "CN=svc-0", runaway})) != nil {
		t.Error("the retry storm is not a storm of its own beside its requester's")
	}
	for _, name := range []string{"other-signer", "other-user", "join-0", "join-4", "human-00", "human-29"} {
		if s.Of(name) != nil {
			t.Errorf("%s is in no storm", name)
		}
	}
	// Duplicates are about signer and subject, whatever the storms.
	if n, id := s.Duplicates("retry-a"); n != 2 || !s.InSet(id, "auto-00") {
		t.Errorf("retry-a has auto-00 and retry-b as duplicates: %d %q", n, id)
	}
	if !s.InSet(st.ID, "auto-07") || s.InSet(st.ID, "other-user") {
		t.Error("the group= filter of a requester storm holds its requests only")
	}
	ids := IDsOf(clientSigner, "CN=svc-0", runaway)
	if ids[0] != st.ID || ids[1] != StormID(StormKey{clientSigner, "CN=svc-0", runaway}) {
		t.Errorf("IDsOf %v", ids)
	}

	// One subject, however many requests: a retry storm, not a requester storm.
	var one []Member
	for i := range 3 * RequesterStormMin {
		one = append(one, Member{Name: fmt.Sprintf("k-%03d", i), Signer: kubeletClient, Subject: "CN=system:node:x", Requester: "system:node:x"})
	}
	if st := GroupStorms(one).Of("k-000"); st == nil || st.ByRequester || st.ID[:2] != "s-" || st.Subjects != 1 {
		t.Errorf("a retry storm: %+v", st)
	}
}

// TestRequesterStormsLinear: 3,000 pending requests of one requester, each a
// different subject, group in time and allocations linear in their number.
func TestRequesterStormsLinear(t *testing.T) {
	const n = 3000
	ps := make([]Member, n)
	for i := range ps {
		ps[i] = Member{Name: fmt.Sprintf("auto-%04d", i), Signer: clientSigner, Subject: fmt.Sprintf("CN=svc-%d", i), Requester: "system:serviceaccount:certs:issuer"}
	}
	s := GroupStorms(ps)
	if st := s.Of("auto-0000"); st == nil || len(st.Members()) != n || st.Subjects != n || s.Len() != 1 {
		t.Fatalf("one requester storm of %d", n)
	}
	allocs := testing.AllocsPerRun(3, func() { GroupStorms(ps) })
	// Per distinct subject the grouping makes a duplicate set (its hashed
	// ID) and a candidate storm, a few allocations each, plus map growth; a
	// list of the others per request would be millions.
	if allocs > 10*n {
		t.Errorf("grouping %d requests allocated %.0f times", n, allocs)
	}
}

func TestStormsCountPendingPerSignerWithTheOldest(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := GroupStorms([]Member{
		{Name: "young", Signer: "a/x", Subject: "1", Requester: "u", Created: t0.Add(time.Hour)},
		{Name: "old", Signer: "a/x", Subject: "2", Requester: "u", Created: t0},
		{Name: "other", Signer: "b/y", Subject: "3", Requester: "u", Created: t0.Add(2 * time.Hour)},
	})
	got := s.Signers()
	if len(got) != 2 || got[0].Signer != "a/x" || got[0].Count != 2 || got[0].Oldest.Name != "old" ||
		got[1].Signer != "b/y" || got[1].Count != 1 {
		t.Fatalf("signers %+v", got)
	}
	if (*Storms)(nil).Signers() != nil || (*Storms)(nil).All() != nil {
		t.Error("a nil index has signers or storms")
	}
}
