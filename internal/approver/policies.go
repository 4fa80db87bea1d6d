package approver

import (
	"cmp"
	"errors"
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
//
// A policy that cannot run (a field it cannot read, CEL that does not
// compile) is not dropped: it might be the Deny policy guarding a signer,
// and without it the Approve policies would decide alone (issue 43: an edit
// through the API breaking a guard had its signer's requests approved at
// once). It keeps the approver from deciding anything for the signers it
// names, and for every signer when those cannot be read, until it is fixed.
type Policies struct {
	list    func() ([]*unstructured.Unstructured, error)
	log     *slog.Logger
	onError func(policy string, err error)

	mu    sync.Mutex
	dirty bool
	set   policySet
}

// policySet is one build of the policies.
type policySet struct {
	programs []*csrpolicy.Program
	broken   []brokenPolicy // by name
}

// brokenPolicy is a policy that cannot run, and the signers it names (nil
// when they cannot be read: then it stands in the way of every signer).
type brokenPolicy struct {
	name    string
	signers []string
}

func (b brokenPolicy) names(signer string) bool {
	return b.signers == nil || (csrpolicy.Policy{Signers: b.signers}).AppliesTo(signer)
}

// NewPolicies reads the policy objects with list (a lister, already filtered
// by the approver's selector). onError is told of each policy that cannot
// run, at each build.
func NewPolicies(list func() ([]*unstructured.Unstructured, error), log *slog.Logger, onError func(policy string, err error)) *Policies {
	return &Policies{list: list, log: log, onError: onError, dirty: true}
}

// Invalidate marks the set for a rebuild (a policy was added, changed or deleted).
func (p *Policies) Invalidate() {
	p.mu.Lock()
	p.dirty = true
	p.mu.Unlock()
}

// For returns the compiled policies naming signer, by name, and the names of
// the policies that cannot run and name it (or whose signers cannot be
// read): while there is one, nothing is decided for the signer.
func (p *Policies) For(signer string) (programs []*csrpolicy.Program, broken []string) {
	set := p.current()
	for _, b := range set.broken {
		if b.names(signer) {
			broken = append(broken, b.name)
		}
	}
	for _, pr := range set.programs {
		if pr.AppliesTo(signer) {
			programs = append(programs, pr)
		}
	}
	return programs, broken
}

// Signers is every signer the policies name (exact names or "<domain>/*"),
// those that cannot run included.
func (p *Policies) Signers() map[string]bool {
	set := p.current()
	out := map[string]bool{}
	for _, pr := range set.programs {
		for _, s := range pr.Signers {
			out[s] = true
		}
	}
	for _, b := range set.broken {
		for _, s := range b.signers {
			out[s] = true
		}
	}
	return out
}

// Entries are the policies as csrwhy reads them: each program, and each
// policy that cannot run with its error (its signers, when they can be read).
func (p *Policies) Entries() []csrpolicy.Entry {
	set := p.current()
	out := make([]csrpolicy.Entry, 0, len(set.programs)+len(set.broken))
	for _, pr := range set.programs {
		out = append(out, csrpolicy.Entry{Policy: pr.Policy, Program: pr})
	}
	for _, b := range set.broken {
		out = append(out, csrpolicy.Entry{Policy: csrpolicy.Policy{Name: b.name, Signers: b.signers}, Err: errPolicyBroken})
	}
	return out
}

// errPolicyBroken is a broken policy's error as a pending reason words it.
var errPolicyBroken = errors.New("it does not compile or read (see its page)")

// Broken counts the policies that cannot run.
func (p *Policies) Broken() int { return len(p.current().broken) }

func (p *Policies) current() policySet {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.dirty {
		return p.set
	}
	objs, err := p.list()
	if err != nil {
		// Keep the last good set; the next change or request tries again.
		p.log.Error("approver: listing the policies failed", "err", err)
		return p.set
	}
	set := policySet{programs: make([]*csrpolicy.Program, 0, len(objs))}
	for _, o := range objs {
		pol, err := csrpolicy.FromObject(o)
		var pr *csrpolicy.Program
		if err == nil {
			pr, err = csrpolicy.Compile(pol)
		}
		if err == nil {
			set.programs = append(set.programs, pr)
			continue
		}
		b := brokenPolicy{name: o.GetName()}
		b.signers, _ = csrpolicy.SignersOf(o)
		if b.signers != nil {
			p.log.Error("approver: policy cannot run; nothing is decided for the signers it names until it is fixed",
				"policy", b.name, "signers", b.signers, "err", err)
		} else {
			p.log.Error("approver: policy cannot run and its signers cannot be read; nothing is decided for any signer until it is fixed",
				"policy", b.name, "err", err)
		}
		p.onError(b.name, err)
		set.broken = append(set.broken, b)
	}
	slices.SortFunc(set.programs, func(a, b *csrpolicy.Program) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(set.broken, func(a, b brokenPolicy) int { return cmp.Compare(a.name, b.name) })
	p.set, p.dirty = set, false
	p.log.Info("approver: policies loaded", "running", len(set.programs), "broken", len(set.broken), "objects", len(objs))
	return set
}
