package csrpolicy

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// Decision is what a policy does with a request its expression matches.
type Decision string

// The decisions.
const (
	Approve Decision = "Approve"
	Deny    Decision = "Deny"
)

// Policy is one approval policy as its object spells it.
type Policy struct {
	Name string
	// Generation is the object's metadata.generation: with the expression's
	// hash, the version a decision records (trace.go).
	Generation int64
	// Signers the policy decides for: exact names, or "<domain>/*".
	Signers []string
	// Expression is CEL and must be a bool: true when the policy decides.
	Expression string
	Decision   Decision
	// Reason and Message are written into the decision's condition.
	Reason, Message string
	// RateLimit, when set, holds an Approve policy's approvals of one
	// requester (spec.username) to MaxApprovals per Period (HeldByRateLimit).
	RateLimit *RateLimit
	// SupersedeDuplicates: when the policy approves a request, the older
	// pending duplicates (DuplicateKey) are denied with reason Superseded.
	SupersedeDuplicates bool
	// Requesters are the requesters the policy covers (spec.requesters);
	// nil covers everyone, as a policy without the field always did.
	Requesters *Requesters
}

// Requesters names who a policy applies to, as cert-manager's
// approver-policy binds a policy to requesters: a request is covered when its
// spec.username is one of Users or of ServiceAccounts ("<namespace>/<name>",
// the username system:serviceaccount:<namespace>:<name>), or one of its
// spec.groups is one of Groups.
type Requesters struct {
	Users, Groups, ServiceAccounts []string
}

// Covers reports whether the policy applies to a request of username in
// groups (spec.username, spec.groups).
func (p Policy) Covers(username string, groups []string) bool {
	r := p.Requesters
	if r == nil {
		return true
	}
	for _, u := range r.Users {
		if u == username {
			return true
		}
	}
	if ns, name, ok := strings.Cut(strings.TrimPrefix(username, "system:serviceaccount:"), ":"); ok && strings.HasPrefix(username, "system:serviceaccount:") {
		for _, sa := range r.ServiceAccounts {
			if sa == ns+"/"+name {
				return true
			}
		}
	}
	for _, g := range r.Groups {
		for _, have := range groups {
			if g == have {
				return true
			}
		}
	}
	return false
}

// String words the requesters for people ("everyone" when nil).
func (r *Requesters) String() string {
	if r == nil {
		return "every requester"
	}
	var parts []string
	add := func(what string, names []string) {
		if len(names) == 0 {
			return
		}
		shown := names[:min(len(names), 3)]
		s := what + " " + strings.Join(shown, ", ")
		if len(names) > 3 {
			s += fmt.Sprintf(" and %d more", len(names)-3)
		}
		parts = append(parts, s)
	}
	add("users", r.Users)
	add("groups", r.Groups)
	add("service accounts", r.ServiceAccounts)
	if len(parts) == 0 {
		return "no requester"
	}
	return strings.Join(parts, "; ")
}

// CompileError is a policy that cannot run: an expression that does not
// compile (Issues has CEL's own text, with line and column), or a bad field.
type CompileError struct {
	Policy, Field, Issues string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("policy %s: %s: %s", e.Policy, e.Field, e.Issues)
}

// celPosition is where CEL's issues text places its first issue
// ("ERROR: <input>:2:15: ...").
var celPosition = regexp.MustCompile(`<input>:(\d+):(\d+)`)

// ExpressionLine is the 1-based line within the expression of the first
// issue CEL reports (0: none, or not the expression's error).
func (e *CompileError) ExpressionLine() int {
	if e.Field != "expression" {
		return 0
	}
	m := celPosition.FindStringSubmatch(e.Issues)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Program is a compiled policy.
type Program struct {
	Policy
	prg cel.Program
	// EstimatedCost is CEL's static worst-case cost of the expression.
	EstimatedCost uint64
	// clauses is the expression split at its top level, made at the first
	// Explain (clauses.go).
	clauses *lazyClauses
	// version is the policy's Version, its hash computed once.
	version Version
}

// Version is the compiled policy's version (trace.go).
func (pr *Program) Version() Version { return pr.version }

// env is the API server's base CEL environment with the policy variables,
// built once (milliseconds).
var env = sync.OnceValues(func() (*cel.Env, error) {
	set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        []cel.EnvOption{cel.Variable("request", cel.DynType), cel.Variable("node", cel.DynType)},
	})
	if err != nil {
		return nil, err
	}
	return set.Env(environment.NewExpressions)
})

// Compile checks p and compiles its expression.
func Compile(p Policy) (*Program, error) {
	switch {
	case p.Decision != Approve && p.Decision != Deny:
		return nil, &CompileError{Policy: p.Name, Field: "decision", Issues: fmt.Sprintf("%q is neither Approve nor Deny", p.Decision)}
	case strings.TrimSpace(p.Expression) == "":
		return nil, &CompileError{Policy: p.Name, Field: "expression", Issues: "empty"}
	}
	if err := checkSigners(p.Signers); err != nil {
		return nil, &CompileError{Policy: p.Name, Field: "signerNames", Issues: err.Error()}
	}
	if p.Decision != Approve && (p.RateLimit != nil || p.SupersedeDuplicates) {
		return nil, &CompileError{Policy: p.Name, Field: "decision", Issues: "rateLimit and supersedeDuplicates apply to Approve policies only"}
	}
	if err := p.RateLimit.check(); err != nil {
		return nil, &CompileError{Policy: p.Name, Field: "rateLimit", Issues: err.Error()}
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, issues := e.Compile(p.Expression)
	if issues != nil && issues.Err() != nil {
		return nil, &CompileError{Policy: p.Name, Field: "expression", Issues: issues.Err().Error()}
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, &CompileError{Policy: p.Name, Field: "expression", Issues: "must be a bool, is " + ast.OutputType().String()}
	}
	// The base environment brings the API server's program options: cost
	// tracking with the library's cost model and the per-expression limit
	// (celconfig.PerCallLimit; k8s.io/apiserver/pkg/cel/environment/base.go).
	// Comprehensions are interruptible, so a context deadline stops them.
	prg, err := e.Program(ast, cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return nil, &CompileError{Policy: p.Name, Field: "expression", Issues: err.Error()}
	}
	est, err := e.EstimateCost(ast, &library.CostEstimator{})
	pr := &Program{Policy: p, prg: prg, clauses: &lazyClauses{}, version: p.Version()}
	if err == nil {
		pr.EstimatedCost = est.Max
	}
	return pr, nil
}

// checkSigners refuses a list of signers a policy cannot be said to name:
// none, or one that is not a signer name.
func checkSigners(signers []string) error {
	if len(signers) == 0 {
		return errors.New("name at least one signer")
	}
	for _, s := range signers {
		if !strings.Contains(s, "/") {
			return fmt.Errorf("%q is not <domain>/<path> or <domain>/*", s)
		}
	}
	return nil
}

// AppliesTo reports whether the policy decides requests for signer.
func (p Policy) AppliesTo(signer string) bool {
	domain, _, _ := strings.Cut(signer, "/")
	for _, s := range p.Signers {
		if s == signer || s == domain+"/*" {
			return true
		}
	}
	return false
}

// Verdict is one policy's answer for one request.
type Verdict struct {
	Policy string
	// Version is the policy's version that gave the verdict (trace.go): the
	// decision's condition and the ledger carry it.
	Version  Version
	Decision Decision // set when Matched
	Reason   string
	Message  string
	// Matched: the expression was true. False with Err nil: the policy does
	// not decide this request.
	Matched bool
	Err     error // the request does not decode, or evaluation failed
}

// ErrUndecodable is the verdict's error for a request whose spec.request does
// not decode: no policy decides what cannot be read.
var ErrUndecodable = errors.New("spec.request does not decode")

// Evaluate runs the policy on one request. The caller checks AppliesTo first.
func (pr *Program) Evaluate(ctx context.Context, in Input) Verdict {
	if in.Request == nil {
		return Verdict{Policy: pr.Name, Version: pr.version, Err: ErrUndecodable}
	}
	return pr.evaluate(ctx, in.vars())
}

// evaluate runs the policy on a request's variables (Input.vars), which
// several policies may share: converting 200 SANs is paid once per request.
func (pr *Program) evaluate(ctx context.Context, vars map[string]any) Verdict {
	v := Verdict{Policy: pr.Name, Version: pr.version}
	out, _, err := pr.prg.ContextEval(ctx, vars)
	if err != nil {
		v.Err = err
		return v
	}
	b, ok := out.Value().(bool)
	if !ok {
		v.Err = fmt.Errorf("the expression gave %v (%s), not a bool", out.Value(), out.Type())
		return v
	}
	if b {
		v.Matched, v.Decision, v.Reason, v.Message = true, pr.Decision, pr.Reason, pr.Message
	}
	return v
}

// Input is one request as the policies see it.
type Input struct {
	CSR     *certificatesv1.CertificateSigningRequest
	Request *csr.Request // nil when spec.request does not decode
	// Node is the Node a kubelet request names (system:node:<name>); nil when
	// there is none, it does not exist, or it was not read.
	Node *Node
}

// Node is what a policy may read of a Node.
type Node struct {
	Name      string
	Addresses []string
}

func (in Input) vars() map[string]any {
	r, c := in.Request, in.CSR
	usages := make([]string, len(c.Spec.Usages))
	for i, u := range c.Spec.Usages {
		usages[i] = string(u)
	}
	extra := map[string]any{}
	for k, v := range c.Spec.Extra {
		extra[k] = strs(v)
	}
	req := map[string]any{
		"name": c.Name, "signerName": c.Spec.SignerName,
		"username": c.Spec.Username, "uid": c.Spec.UID, "groups": strs(c.Spec.Groups), "extra": extra,
		"usages": usages,
		"subject": map[string]any{
			"commonName": r.CommonName, "organizations": strs(r.Organizations), "organizationalUnits": strs(r.OrganizationalUnit),
		},
		"dnsNames": strs(r.DNSNames), "ipAddresses": strs(r.IPAddresses), "uris": strs(r.URIs), "emailAddresses": strs(r.EmailAddresses),
		"keyAlgorithm": r.KeyAlgorithm, "keyBits": int64(r.KeyBits), "requestsCA": r.RequestsCA,
	}
	if c.Spec.ExpirationSeconds != nil {
		req["expirationSeconds"] = int64(*c.Spec.ExpirationSeconds)
	}
	var node any
	if in.Node != nil {
		node = map[string]any{"name": in.Node.Name, "addresses": strs(in.Node.Addresses)}
	}
	return map[string]any{"request": req, "node": node}
}

// strs makes a list of CEL strings, converted once: a Go []string is
// converted element by element on every access, which made a policy walking
// 200 SANs against a Node's 200 addresses allocate 40,000 strings per
// request (BenchmarkCompareWorstShapes). nil is an empty list, so
// `size(request.uris) == 0` works.
func strs(s []string) ref.Val {
	vals := make([]ref.Val, len(s))
	for i, v := range s {
		vals[i] = types.String(v)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals)
}

// NodeName is the Node a kubelet request names: "<name>" of a common name
// "system:node:<name>", "" for any other request.
func NodeName(r *csr.Request) string {
	if r == nil {
		return ""
	}
	name, ok := strings.CutPrefix(r.CommonName, "system:node:")
	if !ok {
		return ""
	}
	return name
}
