package csrqueue

import (
	"cmp"
	"hash/fnv"
)

// memberTree is a storm's (or a signer's) pending requests, oldest first (the
// name breaks ties), as a treap whose versions share their nodes: inserting
// or removing a request costs O(log n) nodes, and a version handed out in a
// Storm (freeze) stays as it was while the tree goes on changing. Nodes made
// since the last freeze belong to the tree alone and are changed in place,
// so a batch of changes (the first sync of thousands of requests) copies
// nothing.
type memberTree struct {
	root *mnode
	n    int
	gen  uint64 // nodes of this generation may be changed in place
}

type mnode struct {
	m           *Member // the request's, shared by the trees it is in
	left, right *mnode
	prio        uint32
	gen         uint64
}

// memberOrder is the order of a storm's members: oldest first, then by name.
func memberOrder(a, b *Member) int {
	return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Name, b.Name))
}

// own returns n itself when the tree may change it, else a copy it may.
func (t *memberTree) own(n *mnode) *mnode {
	if n.gen == t.gen {
		return n
	}
	c := *n
	c.gen = t.gen
	return &c
}

// namePrio is a node's treap priority: a hash of the name, so that the
// tree's shape does not follow the order requests came in.
func namePrio(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}

func (t *memberTree) insert(nd *mnode) {
	nd.gen, nd.prio = t.gen, namePrio(nd.m.Name)
	t.root = t.ins(t.root, nd)
	t.n++
}

func (t *memberTree) ins(n, nd *mnode) *mnode {
	if n == nil {
		return nd
	}
	if nd.prio > n.prio {
		nd.left, nd.right = t.split(n, nd.m)
		return nd
	}
	n = t.own(n)
	if memberOrder(nd.m, n.m) < 0 {
		n.left = t.ins(n.left, nd)
	} else {
		n.right = t.ins(n.right, nd)
	}
	return n
}

// split cuts n into the members before m and the others.
func (t *memberTree) split(n *mnode, m *Member) (l, r *mnode) {
	if n == nil {
		return nil, nil
	}
	n = t.own(n)
	if memberOrder(n.m, m) < 0 {
		n.right, r = t.split(n.right, m)
		return n, r
	}
	l, n.left = t.split(n.left, m)
	return l, n
}

func (t *memberTree) merge(l, r *mnode) *mnode {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.prio > r.prio:
		l = t.own(l)
		l.right = t.merge(l.right, r)
		return l
	}
	r = t.own(r)
	r.left = t.merge(l, r.left)
	return r
}

// remove takes m out; it must be in the tree.
func (t *memberTree) remove(m *Member) {
	t.root = t.rem(t.root, m)
	t.n--
}

func (t *memberTree) rem(n *mnode, m *Member) *mnode {
	if n == nil {
		return nil
	}
	c := memberOrder(m, n.m)
	if c == 0 {
		return t.merge(n.left, n.right)
	}
	n = t.own(n)
	if c < 0 {
		n.left = t.rem(n.left, m)
	} else {
		n.right = t.rem(n.right, m)
	}
	return n
}

// first is the oldest member of the tree rooted at n.
func first(n *mnode) Member {
	for n.left != nil {
		n = n.left
	}
	return *n.m
}

// last is the newest member of the tree rooted at n.
func last(n *mnode) Member {
	for n.right != nil {
		n = n.right
	}
	return *n.m
}

// appendFirst appends, oldest first, up to k members of the tree rooted at n.
func appendFirst(out []Member, n *mnode, k int) []Member {
	if n == nil || len(out) >= k {
		return out
	}
	out = appendFirst(out, n.left, k)
	if len(out) < k {
		out = append(out, *n.m)
	}
	return appendFirst(out, n.right, k)
}
