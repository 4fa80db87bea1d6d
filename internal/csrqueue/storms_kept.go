package csrqueue

import (
	"slices"
)

// The storm index is kept per change of a pending request (the queue's index
// calls add and remove as the informer reports changes): O(log n) each, and
// a view after a change reads what changed, never every pending request.
// Groups changed in a batch are marked and given a new version of their
// Storm at the batch's end (publish), so that readers see a batch whole.

// stormMember is a pending request in the index, with the groups it is in.
// Never modified once made (a frozen Storm's trees point at it).
type stormMember struct {
	m   Member
	key *keyGroup
	dup *dupSet
}

// keyGroup is the pending requests of one StormKey: a retry storm when it
// holds two or more and its requester's requests are not a requester storm.
type keyGroup struct {
	key   StormKey
	id    string // StormID, hashed when first a storm
	tree  memberTree
	req   *reqGroup // nil for a requester that is not a machine identity
	pub   *Storm    // the current version, nil when not a storm
	dirty bool
}

// reqGroup is the pending requests of one machine identity for one signer:
// a requester storm when it holds RequesterStormMin or more under two subjects
// or more.
type reqGroup struct {
	signer, requester, id string
	tree                  memberTree
	keys                  map[*keyGroup]struct{} // its key groups that hold requests (one per subject)
	pub                   *Storm
	dirty                 bool
}

func (r *reqGroup) isStorm() bool {
	return r.tree.n >= RequesterStormMin && len(r.keys) >= 2
}

// dupSet counts the pending requests of one signer and subject.
type dupSet struct {
	id string
	n  int
}

// batchState is what a batch changed, published at its end.
type batchState struct {
	keys    []*keyGroup
	reqs    []*reqGroup
	signers bool
	n       uint64 // batches begun
}

// wasState is what the storms were before the last batch that changed
// them, as a live update asks it (which storm a deleted request was in;
// which storm is one no more): the first state of what each batch touches,
// kept until the next batch that changes something. O(changes), never a
// copy of the index.
type wasState struct {
	at   uint64                  // the batch it describes
	byID map[string]*Storm       // storm ID → its version before (nil: none)
	of   map[string]*stormMember // name → its entry before (nil: not pending)
}

// slab hands out the records of a bulk build in chunks, so that grouping
// thousands of requests allocates a few times, not per request.
type slab struct {
	members []stormMember
	nodes   []mnode
}

func (b *slab) member(m Member) *stormMember {
	if len(b.members) == 0 {
		return &stormMember{m: m}
	}
	r := &b.members[0]
	b.members = b.members[1:]
	r.m = m
	return r
}

func (b *slab) node(m *Member) *mnode {
	if len(b.nodes) == 0 {
		return &mnode{m: m}
	}
	n := &b.nodes[0]
	b.nodes = b.nodes[1:]
	n.m = m
	return n
}

// newStorms returns an empty index; n > 0 sizes it for a bulk build of n.
func newStorms(n int) *Storms {
	s := &Storms{
		members:  make(map[string]*stormMember, n),
		unparsed: map[string]*stormMember{},
		keys:     map[StormKey]*keyGroup{},
		reqs:     map[[2]string]*reqGroup{},
		dups:     map[[2]string]*dupSet{},
		signers:  map[string]*memberTree{},
		storms:   map[string]*Storm{},
	}
	if n > 0 {
		// Each request is in its key's tree, its signer's, and its
		// requester's when a machine asks.
		s.slab = slab{members: make([]stormMember, n), nodes: make([]mnode, 3*n)}
		s.bulk = true
	}
	return s
}

// change runs fn, which adds and removes requests, as one batch: readers see
// the index before it or after it.
func (s *Storms) change(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending.n++
	fn()
	s.publish()
}

// newTree returns an empty tree of a generation of its own.
func (s *Storms) newTree() memberTree {
	s.gen++
	return memberTree{gen: s.gen}
}

// touch notes the state of name before the batch, the first time the batch
// changes it (a new batch that changes something starts a new record).
func (s *Storms) touch(name string) {
	if s.bulk {
		return // nothing was before
	}
	w := &s.was
	if w.at != s.pending.n || w.byID == nil {
		w.at, w.byID, w.of = s.pending.n, map[string]*Storm{}, map[string]*stormMember{}
	}
	if _, ok := w.of[name]; !ok {
		w.of[name] = s.members[name]
	}
}

func (s *Storms) markKey(g *keyGroup) {
	if !g.dirty {
		g.dirty = true
		s.pending.keys = append(s.pending.keys, g)
	}
}

func (s *Storms) markReq(r *reqGroup) {
	if !r.dirty {
		r.dirty = true
		s.pending.reqs = append(s.pending.reqs, r)
	}
}

// add indexes the pending request p (its name not indexed): O(log n).
func (s *Storms) add(p Member) {
	s.touch(p.Name)
	rec := s.slab.member(p)
	k := StormKey{p.Signer, p.Subject, p.Requester}
	g := s.keys[k]
	if g == nil {
		g = &keyGroup{key: k, tree: s.newTree()}
		if machineRequester(p.Requester) {
			rk := [2]string{p.Signer, p.Requester}
			r := s.reqs[rk]
			if r == nil {
				r = &reqGroup{signer: p.Signer, requester: p.Requester, id: RequesterStormID(p.Signer, p.Requester),
					tree: s.newTree(), keys: map[*keyGroup]struct{}{}}
				s.reqs[rk] = r
			}
			g.req = r
		}
		s.keys[k] = g
	}
	rec.key = g
	g.tree.insert(s.slab.node(&rec.m))
	s.markKey(g)
	if r := g.req; r != nil {
		r.keys[g] = struct{}{}
		r.tree.insert(s.slab.node(&rec.m))
		s.markReq(r)
	}
	dk := [2]string{p.Signer, p.Subject}
	d := s.dups[dk]
	if d == nil {
		d = &dupSet{id: "d-" + keyHash(p.Signer, p.Subject)}
		s.dups[dk] = d
	}
	d.n++
	rec.dup = d
	s.countForSigner(rec)
	s.members[p.Name] = rec
}

// addUnparsed counts the pending request p, whose spec.request does not
// decode (no subject: p.Subject is empty), among its signer's pending
// requests and nowhere else: it is in no storm and no duplicate set, but it
// waits for a decision like any other (the home page's pending count and
// "who approves" would otherwise say fewer than the queue's Pending tab).
// O(log n).
func (s *Storms) addUnparsed(p Member) {
	rec := s.slab.member(p)
	s.unparsed[p.Name] = rec
	s.countForSigner(rec)
}

// removeUnparsed drops what addUnparsed added for name, if anything.
func (s *Storms) removeUnparsed(name string) {
	if rec := s.unparsed[name]; rec != nil {
		delete(s.unparsed, name)
		s.uncountForSigner(rec)
	}
}

func (s *Storms) countForSigner(rec *stormMember) {
	t := s.signers[rec.m.Signer]
	if t == nil {
		// A signer's tree is never handed out: it changes in place.
		nt := s.newTree()
		t = &nt
		s.signers[rec.m.Signer] = t
	}
	t.insert(s.slab.node(&rec.m))
	s.pending.signers = true
}

func (s *Storms) uncountForSigner(rec *stormMember) {
	t := s.signers[rec.m.Signer]
	t.remove(&rec.m)
	if t.n == 0 {
		delete(s.signers, rec.m.Signer)
	}
	s.pending.signers = true
}

// remove drops the pending request name, if indexed: O(log n).
func (s *Storms) remove(name string) {
	rec := s.members[name]
	if rec == nil {
		return
	}
	s.touch(name)
	delete(s.members, name)
	g := rec.key
	g.tree.remove(&rec.m)
	s.markKey(g)
	if r := g.req; r != nil {
		r.tree.remove(&rec.m)
		if g.tree.n == 0 {
			delete(r.keys, g)
		}
		s.markReq(r)
	}
	if rec.dup.n--; rec.dup.n == 0 {
		delete(s.dups, [2]string{rec.m.Signer, rec.m.Subject})
	}
	s.uncountForSigner(rec)
}

// publish gives each group the batch changed its new version: O(log n) per
// changed group (a new Storm sharing its tree, which is frozen), and
// O(signers log signers) when a signer's requests changed.
func (s *Storms) publish() {
	if len(s.pending.keys) > 0 || len(s.pending.reqs) > 0 {
		s.version++
	}
	// A requester's requests becoming a requester storm, or one no more,
	// changes whether its retry storms are storms: at most
	// RequesterStormMin of them (it crosses at that many requests) or two
	// (it crosses at two subjects).
	for _, r := range s.pending.reqs {
		r.dirty = false
		if r.isStorm() != (r.pub != nil) {
			for g := range r.keys {
				s.markKey(g)
			}
		}
		var st *Storm
		if r.isStorm() {
			st = &Storm{Key: StormKey{Signer: r.signer, Requester: r.requester}, ByRequester: true,
				Subjects: len(r.keys), ID: r.id, members: r.tree.root, n: r.tree.n}
			r.tree.gen = s.nextGen()
		}
		s.setPub(r.id, &r.pub, st)
		if r.tree.n == 0 {
			delete(s.reqs, [2]string{r.signer, r.requester})
		}
	}
	for _, g := range s.pending.keys {
		g.dirty = false
		var st *Storm
		if g.tree.n >= 2 && (g.req == nil || !g.req.isStorm()) {
			if g.id == "" {
				// Hashed only once a storm: a requester storm of 3,000
				// subjects hashes none of its retry keys.
				g.id = StormID(g.key)
			}
			st = &Storm{Key: g.key, Subjects: 1, ID: g.id, members: g.tree.root, n: g.tree.n}
			g.tree.gen = s.nextGen()
		}
		if g.id != "" {
			s.setPub(g.id, &g.pub, st)
		}
		if g.tree.n == 0 {
			delete(s.keys, g.key)
		}
	}
	s.pending.keys, s.pending.reqs = s.pending.keys[:0], s.pending.reqs[:0]
	if s.pending.signers {
		s.pending.signers = false
		list := make([]SignerPending, 0, len(s.signers))
		for name, t := range s.signers {
			list = append(list, SignerPending{Signer: name, Count: t.n, Oldest: first(t.root)})
		}
		slices.SortFunc(list, func(a, b SignerPending) int { return memberOrder(&a.Oldest, &b.Oldest) })
		s.signerList = list
	}
	s.slab, s.bulk = slab{}, false // a bulk build's chunks serve it alone
}

func (s *Storms) nextGen() uint64 {
	s.gen++
	return s.gen
}

// setPub makes st (nil: none) the current version of the storm id, noting
// the version before for the live update.
func (s *Storms) setPub(id string, pub **Storm, st *Storm) {
	old := *pub
	if old == st {
		return
	}
	if s.was.at == s.pending.n && s.was.byID != nil {
		if _, ok := s.was.byID[id]; !ok {
			s.was.byID[id] = old
		}
	}
	if old != nil {
		s.collapsed -= old.n - 1
		delete(s.storms, id)
	}
	if st != nil {
		s.collapsed += st.n - 1
		s.storms[id] = st
	}
	*pub = st
}

// Version changes whenever a storm changes (or one starts or ends): what a
// caller derives from All (the largest storms) is current while it holds.
func (s *Storms) Version() uint64 {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.version
}

// wasByID is the storm with the ID before the last batch that changed the
// index (nil: none).
func (s *Storms) wasByID(id string) *Storm {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.wasByIDLocked(id)
}

func (s *Storms) wasByIDLocked(id string) *Storm {
	if st, ok := s.was.byID[id]; ok {
		return st
	}
	return s.storms[id]
}

// wasOf is the storm the request name was in before the last batch that
// changed the index (nil: none, or not pending then).
func (s *Storms) wasOf(name string) *Storm {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, touched := s.was.of[name]
	if !touched {
		rec = s.members[name]
	}
	if rec == nil {
		return nil
	}
	ids := IDsOf(rec.m.Signer, rec.m.Subject, rec.m.Requester)
	if st := s.wasByIDLocked(ids[0]); st != nil {
		return st
	}
	return s.wasByIDLocked(ids[1])
}
