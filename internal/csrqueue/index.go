package csrqueue

import (
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// nStates is how many states the queue's tabs name (States).
const nStates = 5

// slotOf is a state's place in States, the index of its tab's sets.
func slotOf(state string) int {
	switch state {
	case Pending:
		return 0
	case Approved:
		return 1
	case Issued:
		return 2
	case Denied:
		return 3
	}
	return 4
}

// entry is one CSR object in the index with its facts. A change of the CSR
// replaces its entry (the informer hands out a new object), so an entry's
// place in every order stays put while it is indexed.
//
// The facts are part of the entry, not an allocation of their own, and the
// state and the decision time are not copied from the object (the state is
// the slot, the time read from the conditions when an order or a row asks):
// 112 bytes a CSR (TestEntrySize), one allocator size class, where an entry
// and its facts were 48 + 128, 3.4 MB at the page benchmark's 53,000 CSRs.
type entry struct {
	obj   *certificatesv1.CertificateSigningRequest
	ident *identity // who asked
	seen  uint64    // the index's sync this object was last given in
	f     facts
}

// slot is the entry's state tab (slotOf its state).
func (e *entry) slot() int { return int(e.f.slot) }

// pos is the entry's place in the queue order.
func (e *entry) pos() queuePos {
	return queuePos{part: partOf(e.f.state(), e.f.bad), created: e.obj.CreationTimestamp.Time, decided: e.f.decided(e.obj), name: e.obj.Name}
}

// identity is a requester as the requester filter reads it: the username and
// the groups. A cluster has few (one per node, user and service account), so
// the filter matches each once and takes its CSRs.
type identity struct {
	user   string
	groups []string
	csrs   members
}

// members is a set of entries per state tab.
type members [nStates]map[*entry]struct{}

func (m *members) add(e *entry) {
	if m[e.slot()] == nil {
		m[e.slot()] = map[*entry]struct{}{}
	}
	m[e.slot()][e] = struct{}{}
}

func (m *members) del(e *entry) { delete(m[e.slot()], e) }

func (m *members) len() int {
	n := 0
	for _, s := range m {
		n += len(s)
	}
	return n
}

// index is what the queue's views need, kept per CSR change: membership per
// state tab, per signer and per requester, the tab counts, and each state
// tab's sort orders (queue order always, the other columns' once a view has
// sorted by them). A change costs O(log n) per order kept; a view reads the
// rows it shows and the sets its filters select, never every CSR.
type index struct {
	byName  map[string]*entry
	counts  [nStates]int
	orders  map[string]*[nStates]*ordered // sort key → each state tab's order
	signers map[string]*members
	idents  map[string]*identity
	// storms groups the pending requests that decode, kept per change
	// like the rest (storms_kept.go).
	storms *Storms
	// approvals are each requester's approvals in time order, for the rate
	// limits' holds (approvals.go).
	approvals *approvals
	// syncs counts the full syncs.
	syncs uint64
}

func newIndex() *index {
	x := &index{byName: map[string]*entry{}, orders: map[string]*[nStates]*ordered{},
		signers: map[string]*members{}, idents: map[string]*identity{}, storms: newStorms(0), approvals: newApprovals()}
	x.order(SortQueue)
	return x
}

// treeKeys are the sort keys kept as orders; the state column sorts by the
// queue orders of the tabs (one state per tab), the checks column by the
// findings, which depend on other requests (no order kept).
func treeKey(key string) bool {
	switch key {
	case SortQueue, SortAge, SortSigner, SortRequestor, SortDuration:
		return true
	}
	return false
}

// order returns each state tab's order by key (a tree key), building it from
// the indexed entries the first time a view sorts by it.
func (x *index) order(key string) *[nStates]*ordered {
	if o := x.orders[key]; o != nil {
		return o
	}
	o := &[nStates]*ordered{}
	by := entryOrder(key)
	for i := range o {
		o[i] = newOrdered(by)
	}
	for _, e := range x.byName {
		o[e.slot()].insert(e)
	}
	x.orders[key] = o
	return o
}

// entryOrder is the order of a tree key: the column, then queue order.
func entryOrder(key string) func(a, b *entry) int {
	return func(a, b *entry) int {
		if r := compareCSRs(key, a.obj, b.obj); r != 0 {
			return r
		}
		return compareQueuePos(a.pos(), b.pos())
	}
}

// put indexes c, replacing the entry of its name when c is another object.
func (x *index) put(c *certificatesv1.CertificateSigningRequest, checks Checks) *entry {
	old := x.byName[c.Name]
	if old != nil {
		if old.obj == c {
			return old
		}
		x.remove(old)
	}
	e := &entry{obj: c}
	f := &e.f
	f.init(c)
	if f.state() == Pending {
		// The queue order puts requests that do not decode after the others.
		f.bad = f.decoded(c, checks).req == nil
	}
	x.byName[c.Name] = e
	x.counts[e.slot()]++
	for _, o := range x.orders {
		o[e.slot()].insert(e)
	}
	s := x.signers[c.Spec.SignerName]
	if s == nil {
		s = &members{}
		x.signers[c.Spec.SignerName] = s
	}
	s.add(e)
	key := identityKey(c)
	id := x.idents[key]
	if id == nil {
		id = &identity{user: c.Spec.Username, groups: c.Spec.Groups}
		x.idents[key] = id
	}
	id.csrs.add(e)
	e.ident = id
	x.approvals.add(c) // approved, issued or not (ApprovedAt)
	if e.slot() == slotOf(Pending) {
		m := Member{Name: c.Name, UID: string(c.UID), Signer: c.Spec.SignerName,
			Requester: c.Spec.Username, Created: c.CreationTimestamp.Time, Usages: usagesKey(c)}
		if e.f.bad {
			x.storms.addUnparsed(m)
		} else {
			m.Subject = f.pending.req.Subject
			x.storms.add(m)
		}
	}
	return e
}

// remove drops e from every set; sets left empty go, so that the index
// holds only what the cluster holds.
func (x *index) remove(e *entry) {
	delete(x.byName, e.obj.Name)
	x.counts[e.slot()]--
	for _, o := range x.orders {
		o[e.slot()].remove(e)
	}
	if s := x.signers[e.obj.Spec.SignerName]; s != nil {
		s.del(e)
		if s.len() == 0 {
			delete(x.signers, e.obj.Spec.SignerName)
		}
	}
	e.ident.csrs.del(e)
	if e.ident.csrs.len() == 0 {
		delete(x.idents, identityKey(e.obj))
	}
	x.approvals.remove(e.obj)
	if e.slot() == slotOf(Pending) {
		if e.f.bad {
			x.storms.removeUnparsed(e.obj.Name)
		} else {
			x.storms.remove(e.obj.Name)
		}
	}
}

// forget removes the CSR name (deleted).
func (x *index) forget(name string) {
	if e := x.byName[name]; e != nil {
		x.remove(e)
	}
}

func identityKey(c *certificatesv1.CertificateSigningRequest) string {
	return c.Spec.Username + "\x00" + strings.Join(c.Spec.Groups, "\x00")
}

// sync makes the index hold exactly items: O(n) map lookups, O(log n) more
// per object that changed. For sources that report no changes, and the
// first view of those that do.
func (x *index) sync(items []*certificatesv1.CertificateSigningRequest, checks Checks) {
	x.syncs++
	for _, c := range items {
		x.put(c, checks).seen = x.syncs
	}
	if len(x.byName) == len(items) {
		return
	}
	for _, e := range x.byName {
		if e.seen != x.syncs {
			x.remove(e)
		}
	}
}

// stateCounts are the tab counts as a view reports them: states with none
// are left out.
func (x *index) stateCounts() map[string]int {
	out := map[string]int{}
	for i, n := range x.counts {
		if n > 0 {
			out[States[i]] = n
		}
	}
	return out
}

// signerCounts are the CSRs per signer over every CSR.
func (x *index) signerCounts() map[string]int {
	out := make(map[string]int, len(x.signers))
	for name, s := range x.signers {
		out[name] = s.len()
	}
	return out
}

// decidable reports whether some pending request's signer is one the user
// may decide for.
func (x *index) decidable(may func(string) bool) bool {
	if may == nil {
		return false
	}
	for name, s := range x.signers {
		if len(s[slotOf(Pending)]) > 0 && may(name) {
			return true
		}
	}
	return false
}
