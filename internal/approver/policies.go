package approver

import (
	"cmp"
	"log/slog"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// Policies is the compiled set of policies the approver runs, rebuilt from
// the policy objects when one of them changes (Invalidate), at the next
// request: compiling costs milliseconds per policy, so it is done once per
// change, not per request.
type Policies struct {
	list    func() ([]*unstructured.Unstructured, error)
	log     *slog.Logger
	onError func(policy string, err error)

	mu       sync.Mutex
	dirty    bool
	programs []*csrpolicy.Program
}

// NewPolicies reads the policy objects with list (a lister, already filtered
// by the approver's selector). onError is told of each policy that cannot run.
func NewPolicies(list func() ([]*unstructured.Unstructured, error), log *slog.Logger, onError func(policy string, err error)) *Policies {
	return &Policies{list: list, log: log, onError: onError, dirty: true}
}

// Invalidate marks the set for a rebuild (a policy was added, changed or deleted).
func (p *Policies) Invalidate() {
	p.mu.Lock()
	p.dirty = true
	p.mu.Unlock()
}

// For returns the compiled policies naming signer, by name.
func (p *Policies) For(signer string) []*csrpolicy.Program {
	var out []*csrpolicy.Program
	for _, pr := range p.all() {
		if pr.AppliesTo(signer) {
			out = append(out, pr)
		}
	}
	return out
}

// Signers is every signer the policies name (exact names or "<domain>/*").
func (p *Policies) Signers() map[string]bool {
	out := map[string]bool{}
	for _, pr := range p.all() {
		for _, s := range pr.Signers {
			out[s] = true
		}
	}
	return out
}

func (p *Policies) all() []*csrpolicy.Program {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.dirty {
		return p.programs
	}
	objs, err := p.list()
	if err != nil {
		// Keep the last good set; the next change or request tries again.
		p.log.Error("approver: listing the policies failed", "err", err)
		return p.programs
	}
	programs := make([]*csrpolicy.Program, 0, len(objs))
	for _, o := range objs {
		pol, err := csrpolicy.FromObject(o)
		var pr *csrpolicy.Program
		if err == nil {
			pr, err = csrpolicy.Compile(pol)
		}
		if err != nil {
			// A broken policy decides nothing; the others still run.
			p.log.Error("approver: policy cannot run", "policy", o.GetName(), "err", err)
			p.onError(o.GetName(), err)
			continue
		}
		programs = append(programs, pr)
	}
	slices.SortFunc(programs, func(a, b *csrpolicy.Program) int { return cmp.Compare(a.Name, b.Name) })
	p.programs, p.dirty = programs, false
	p.log.Info("approver: policies loaded", "running", len(programs), "objects", len(objs))
	return programs
}
