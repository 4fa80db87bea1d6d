package csrpolicy

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Source is where a Set reads the policy objects (kube.PolicyCache): the
// objects and a generation that moves on every change of them.
type Source interface {
	List() ([]*unstructured.Unstructured, uint64, error)
	Generation() uint64
}

// Set is the compiled policies of a Source, compiled once per change of the
// policies (compiling costs milliseconds a policy) and shared by every reader:
// the queue's rows and filter, a CSR page's policies panel, the agreement
// page. Safe for concurrent use.
type Set struct {
	src Source

	mu  sync.Mutex
	cur *Compiled
}

// NewSet returns the set over src.
func NewSet(src Source) *Set { return &Set{src: src} }

// Compiled is one generation of the policies, compiled. It never changes:
// a change of the policies makes a new one.
type Compiled struct {
	// Gen is the source's generation it was compiled from (0: no policies
	// served, Err says why).
	Gen uint64
	// Err is the source's error (kube.ErrPoliciesAbsent): no policies.
	Err error
	// Policies, by name: each compiled, or why it cannot run.
	Policies []Entry
}

// Entry is one policy object: its program, or the error that keeps it from
// running (a field the object spells wrong, CEL that does not compile).
type Entry struct {
	Policy  Policy
	Program *Program // nil when Err is set
	Err     error
}

// Current returns the compiled policies of the source's generation now,
// compiling them when it moved since the last call.
func (s *Set) Current() *Compiled {
	gen := s.src.Generation()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.Gen == gen && gen != 0 {
		return s.cur
	}
	objs, gen, err := s.src.List()
	if err != nil {
		s.cur = &Compiled{Err: err}
		return s.cur
	}
	s.cur = CompileAll(gen, objs)
	return s.cur
}

// CompileAll compiles every object into one generation of policies; an
// object version compiled before (by an earlier generation, or for the
// policies' pages) is not compiled again (CompileObject).
func CompileAll(gen uint64, objs []*unstructured.Unstructured) *Compiled {
	c := &Compiled{Gen: gen, Policies: make([]Entry, 0, len(objs))}
	for _, o := range objs {
		c.Policies = append(c.Policies, CompileObject(o))
	}
	slices.SortFunc(c.Policies, func(a, b Entry) int { return cmp.Compare(a.Policy.Name, b.Policy.Name) })
	return c
}

// Lookup returns the named policy's entry.
func (c *Compiled) Lookup(name string) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(c.Policies, name, func(e Entry, n string) int { return cmp.Compare(e.Policy.Name, n) })
	if !ok {
		return Entry{}, false
	}
	return c.Policies[i], true
}

// Names are the policies' names, in order.
func (c *Compiled) Names() []string {
	out := make([]string, len(c.Policies))
	for i, e := range c.Policies {
		out[i] = e.Policy.Name
	}
	return out
}

// Evaluate runs every policy naming the request's signer and returns the
// verdicts of those that match or could not run (a policy that does not
// match says nothing in shadow mode), in policy name order; nil for none. A
// policy that cannot run is an error verdict for every request of its
// signers (for each request, when its signers cannot be read either).
func (c *Compiled) Evaluate(ctx context.Context, in Input) []Verdict {
	var out []Verdict
	var vars map[string]any // built once, for the first policy that runs
	signer := in.CSR.Spec.SignerName
	for _, e := range c.Policies {
		if len(e.Policy.Signers) > 0 && !e.Policy.AppliesTo(signer) {
			continue
		}
		if e.Err == nil && !e.Policy.Covers(in.CSR.Spec.Username, in.CSR.Spec.Groups) {
			continue // spec.requesters: not this policy's requester
		}
		if e.Err != nil {
			out = append(out, Verdict{Policy: e.Policy.Name, Err: e.Err})
			continue
		}
		if in.Request == nil {
			out = append(out, Verdict{Policy: e.Policy.Name, Err: ErrUndecodable})
			continue
		}
		if vars == nil {
			vars = in.vars()
		}
		if v := e.Program.evaluate(ctx, vars); v.Matched || v.Err != nil {
			out = append(out, v)
		}
	}
	return out
}
