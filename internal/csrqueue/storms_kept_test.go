package csrqueue

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestKeptStormsMatchAFromScratchBuild: after any random sequence of new
// requests, decisions, other updates and deletions, the storm index the
// queue keeps per change says what the grouping it replaced (scratchStorms,
// the rebuild from every pending request) says of the same requests: the
// storms with their members in order, each request's storm and duplicates,
// the signers' counts and oldest.
func TestKeptStormsMatchAFromScratchBuild(t *testing.T) {
	seeds, rounds := 16, 40
	if testing.Short() {
		seeds = 4
	}
	var requesterStorms, retryStorms int
	for seed := range seeds {
		g := newPropGen(t, uint64(1000+seed))
		src := &gettingSource{}
		for range 20 + g.r.IntN(60) {
			src.items = append(src.items, g.csr())
		}
		q := New(src)
		for round := range rounds {
			if round > 0 {
				g.change(src)
			}
			kept := q.Storms()
			want := scratchStorms(t, src, q.Checks())
			if got := describeStorms(kept); got != want {
				t.Fatalf("seed %d, round %d: the kept index:\n%s\nfrom scratch:\n%s", seed, round, got, want)
			}
			for _, st := range kept.All() {
				if st.ByRequester {
					requesterStorms++
				} else {
					retryStorms++
				}
			}
		}
	}
	if requesterStorms == 0 || retryStorms == 0 {
		t.Errorf("the random clusters held %d requester storms and %d retry storms: the generator no longer covers both", requesterStorms, retryStorms)
	}
}

// describeStorms is everything a reader asks of a storm index, as text.
func describeStorms(s *Storms) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "storms %d, rows saved %d\n", s.Len(), s.rowsSaved())
	all := s.All()
	slices.SortFunc(all, func(a, b *Storm) int { return cmp.Compare(a.ID, b.ID) })
	for _, st := range all {
		fmt.Fprintf(&sb, "%s %+v requester=%v subjects=%d oldest=%s newest=%s:", st.ID, st.Key, st.ByRequester, st.Subjects, st.Oldest().Name, st.Newest().Name)
		for _, m := range st.Members() {
			fmt.Fprintf(&sb, " %s", m.Name)
		}
		sb.WriteByte('\n')
	}
	names := make([]string, 0, len(s.members))
	for name := range s.members {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		id := ""
		if st := s.Of(name); st != nil {
			id = st.ID
		}
		n, dup := s.Duplicates(name)
		fmt.Fprintf(&sb, "%s uid=%s storm=%s dups=%d %s in=%v\n", name, s.UID(name), id, n, dup, s.InSet(dup, name))
	}
	for _, sp := range s.Signers() {
		fmt.Fprintf(&sb, "signer %s %d oldest %s\n", sp.Signer, sp.Count, sp.Oldest.Name)
	}
	return sb.String()
}

// scratchStorms groups the pending requests of src from scratch, as the
// storm index did before it was kept per change (the grouping rules of
// storms.go, written out again), described as describeStorms does.
func scratchStorms(t *testing.T, src *gettingSource, checks Checks) string {
	t.Helper()
	var pending, unparsed []Member
	for _, c := range src.items {
		if State(c) != Pending {
			continue
		}
		req, err := checks.DecodeRequest(c.Spec.Request)
		if err != nil {
			// In no storm, but counted among its signer's pending requests.
			unparsed = append(unparsed, Member{Name: c.Name, UID: string(c.UID), Signer: c.Spec.SignerName,
				Requester: c.Spec.Username, Created: c.CreationTimestamp.Time})
			continue
		}
		pending = append(pending, Member{Name: c.Name, UID: string(c.UID), Signer: c.Spec.SignerName,
			Subject: req.Subject, Requester: c.Spec.Username, Created: c.CreationTimestamp.Time})
	}
	// The queue order of pending requests: the oldest first, then by name.
	slices.SortFunc(pending, func(a, b Member) int { return memberOrder(&a, &b) })

	type storm struct {
		key         StormKey
		byRequester bool
		subjects    int
		id          string
		members     []Member
	}
	byKey := map[StormKey]*storm{}
	type tally struct {
		requests int
		keys     []StormKey
	}
	byRequester := map[[2]string]*tally{}
	dupCount := map[[2]string]int{}
	type signer struct {
		name   string
		count  int
		oldest Member
	}
	var signers []*signer
	signerAt := map[string]*signer{}
	countSigner := func(p Member) {
		if sp := signerAt[p.Signer]; sp != nil {
			sp.count++
			if memberOrder(&p, &sp.oldest) < 0 {
				sp.oldest = p
			}
		} else {
			sp = &signer{p.Signer, 1, p}
			signerAt[p.Signer] = sp
			signers = append(signers, sp)
		}
	}
	waiting := append(slices.Clone(pending), unparsed...)
	slices.SortFunc(waiting, func(a, b Member) int { return memberOrder(&a, &b) })
	for _, p := range waiting {
		countSigner(p)
	}
	for _, p := range pending {
		dupCount[[2]string{p.Signer, p.Subject}]++
		k := StormKey{p.Signer, p.Subject, p.Requester}
		r := [2]string{p.Signer, p.Requester}
		if byRequester[r] == nil {
			byRequester[r] = &tally{}
		}
		if byKey[k] == nil {
			byKey[k] = &storm{key: k, subjects: 1}
			byRequester[r].keys = append(byRequester[r].keys, k)
		}
		byKey[k].members = append(byKey[k].members, p)
		byRequester[r].requests++
	}
	for r, tl := range byRequester {
		if tl.requests < RequesterStormMin || len(tl.keys) < 2 || !machineRequester(r[1]) {
			continue
		}
		k := StormKey{Signer: r[0], Requester: r[1]}
		rs := &storm{key: k, byRequester: true, subjects: len(tl.keys), id: RequesterStormID(r[0], r[1])}
		for _, sk := range tl.keys {
			rs.members = append(rs.members, byKey[sk].members...)
			delete(byKey, sk)
		}
		byKey[k] = rs
	}
	var storms []*storm
	stormOf := map[string]string{}
	saved := 0
	for _, st := range byKey {
		if len(st.members) < 2 {
			continue
		}
		slices.SortFunc(st.members, func(a, b Member) int { return memberOrder(&a, &b) })
		if st.id == "" {
			st.id = StormID(st.key)
		}
		storms = append(storms, st)
		saved += len(st.members) - 1
		for _, m := range st.members {
			stormOf[m.Name] = st.id
		}
	}
	slices.SortFunc(storms, func(a, b *storm) int { return cmp.Compare(a.id, b.id) })

	var sb strings.Builder
	fmt.Fprintf(&sb, "storms %d, rows saved %d\n", len(storms), saved)
	for _, st := range storms {
		fmt.Fprintf(&sb, "%s %+v requester=%v subjects=%d oldest=%s newest=%s:", st.id, st.key, st.byRequester, st.subjects,
			st.members[0].Name, st.members[len(st.members)-1].Name)
		for _, m := range st.members {
			fmt.Fprintf(&sb, " %s", m.Name)
		}
		sb.WriteByte('\n')
	}
	byName := slices.Clone(pending)
	slices.SortFunc(byName, func(a, b Member) int { return cmp.Compare(a.Name, b.Name) })
	for _, p := range byName {
		n, dup := dupCount[[2]string{p.Signer, p.Subject}]-1, "d-"+keyHash(p.Signer, p.Subject)
		in := true
		if n == 0 {
			dup, in = "", false
		}
		fmt.Fprintf(&sb, "%s uid=%s storm=%s dups=%d %s in=%v\n", p.Name, p.UID, stormOf[p.Name], n, dup, in)
	}
	for _, sp := range signers {
		fmt.Fprintf(&sb, "signer %s %d oldest %s\n", sp.name, sp.count, sp.oldest.Name)
	}
	return sb.String()
}
