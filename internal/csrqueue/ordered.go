package csrqueue

// ordered is a set of entries kept in one order (a treap): insert and remove
// are O(log n) expected, so a CSR change updates a sort order of the queue
// without sorting all of it, and a view reads its first rows in order
// without touching the rest. The order must be total (compareQueue ends on
// the name) and an entry's place must not change while it is in the set
// (entries are replaced, never modified, when their CSR changes).
type ordered struct {
	root *tnode
	cmp  func(a, b *entry) int
	n    int
	seed uint32
}

type tnode struct {
	e           *entry
	left, right *tnode
	prio        uint32
}

func newOrdered(cmp func(a, b *entry) int) *ordered { return &ordered{cmp: cmp, seed: 0x9e3779b9} }

// rand is xorshift32: the treap needs priorities that do not follow the
// insertion order, not good randomness.
func (t *ordered) rand() uint32 {
	x := t.seed
	x ^= x << 13
	x ^= x >> 17
	x ^= x << 5
	t.seed = x
	return x
}

// split cuts n into the nodes before e and the rest (strict) or into the
// nodes up to e and the rest (!strict).
func (t *ordered) split(n *tnode, e *entry, strict bool) (l, r *tnode) {
	if n == nil {
		return nil, nil
	}
	c := t.cmp(n.e, e)
	if c < 0 || (!strict && c == 0) {
		n.right, r = t.split(n.right, e, strict)
		return n, r
	}
	l, n.left = t.split(n.left, e, strict)
	return l, n
}

func merge(l, r *tnode) *tnode {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.prio > r.prio:
		l.right = merge(l.right, r)
		return l
	}
	r.left = merge(l, r.left)
	return r
}

func (t *ordered) insert(e *entry) {
	l, r := t.split(t.root, e, true)
	t.root = merge(merge(l, &tnode{e: e, prio: t.rand()}), r)
	t.n++
}

func (t *ordered) remove(e *entry) {
	l, rest := t.split(t.root, e, true)
	mid, r := t.split(rest, e, false)
	if mid != nil {
		t.n--
	}
	t.root = merge(l, r)
}

// cursor walks a set in order (desc: backwards), one entry per next.
type cursor struct {
	stack []*tnode
	desc  bool
}

func (t *ordered) cursor(desc bool) *cursor {
	c := &cursor{desc: desc}
	c.push(t.root)
	return c
}

func (c *cursor) push(n *tnode) {
	for n != nil {
		c.stack = append(c.stack, n)
		if c.desc {
			n = n.right
		} else {
			n = n.left
		}
	}
}

// next returns the next entry, nil at the end.
func (c *cursor) next() *entry {
	if len(c.stack) == 0 {
		return nil
	}
	n := c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	if c.desc {
		c.push(n.left)
	} else {
		c.push(n.right)
	}
	return n.e
}

// mergeCursor walks several sets as one, in the order cmp gives (each set
// already in that order): the all tab reads the state tabs' orders.
type mergeCursor struct {
	cursors []*cursor
	heads   []*entry
	cmp     func(a, b *entry) int
}

func newMergeCursor(cmp func(a, b *entry) int, cursors ...*cursor) *mergeCursor {
	m := &mergeCursor{cursors: cursors, heads: make([]*entry, len(cursors)), cmp: cmp}
	for i, c := range cursors {
		m.heads[i] = c.next()
	}
	return m
}

func (m *mergeCursor) next() *entry {
	best := -1
	for i, h := range m.heads {
		if h != nil && (best < 0 || m.cmp(h, m.heads[best]) < 0) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	e := m.heads[best]
	m.heads[best] = m.cursors[best].next()
	return e
}
