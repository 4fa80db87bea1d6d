package csrqueue

import (
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// Cache is the queue's index of the CSRs (index.go) with the facts it
// derives from each (state; the search text that depends on nothing else;
// the checks' findings as text and rank; for a pending request, also its
// decoding and findings), kept between views, so that a queue
// of 50,000 CSRs neither decodes, checks and words every request again on
// each filter keystroke nor walks every CSR for a tab of a few hundred.
//
// Facts belong to one object: the informer cache never modifies an object
// it handed out, a change arrives as a new object, which replaces the old
// one's entry and facts, so a fact can never be stale. The index follows the
// CSRs either by the changes a Queue's source reports (follow.go) or, given
// the whole list (Run, Live, Storms), by comparing it with what it holds.
// One cache must serve one Checks and one Words (the findings and the search
// text depend on them). Safe for concurrent use. The zero value is ready.
type Cache struct {
	mu sync.Mutex
	x  *index
}

// facts is what the queue knows of one CSR object, computed once, kept in
// its index entry. What only a pending request keeps is apart (pendingOnly),
// so that the tens of thousands of decided requests of a large cluster hold
// half the bytes each. The state and the decision time are the object's
// (state, decided): a copy of them was 40 bytes a CSR.
type facts struct {
	// own and shared are the lower-cased search text that depends on
	// nothing but the object, besides its name (Words.Static), worded once
	// (staticOnce); shared is interned: tens of thousands of requests repeat
	// a few signers, requesters, durations and states, which were most of
	// each one's text.
	own, shared string

	// findingText is the findings as the row shows them, lower-cased, for
	// the filter: a template (findings_text.go) when tmpl is not 0.
	findingText string

	pending *pendingOnly // nil for a decided request

	// The fields of 4 bytes and less last, in one run: an entry with its
	// facts is 112 bytes (TestEntrySize), one of the allocator's size
	// classes; a field between the strings would pad it into the next.
	rank       int32      // checksRank of the findings (packRank), for the sort by checks
	checkMu    sync.Mutex // guards checked, noFindings, findingText, tmpl, cnLen, cnOff, rank and pending.findings
	staticOnce sync.Once
	slot       uint8 // slotOf(State(c)), the state's tab
	bad        bool  // pending, and spec.request does not decode
	checked    bool
	noFindings bool  // the checks found nothing (nothing to work out again)
	tmpl       uint8 // the marks findingText holds (findings_text.go)
	cnLen      uint8
	cnOff      uint16 // the subject CN's place in own, when tmpl has tmplCN
}

// pendingOnly is what the queue keeps of a pending request only.
type pendingOnly struct {
	decodeOnce sync.Once
	req        *csr.Request // nil when spec.request does not decode
	decodeErr  error

	findings []csr.Finding // all but the duplicates finding, which depends on other requests

	policy policyVerdicts // the policies' verdicts (verdicts.go)
}

// newFacts are the facts of c, none worked out yet (tests; the index keeps
// them in its entries: init).
func newFacts(c *certificatesv1.CertificateSigningRequest) *facts {
	f := &facts{}
	f.init(c)
	return f
}

// init sets the facts of c, none worked out yet.
func (f *facts) init(c *certificatesv1.CertificateSigningRequest) {
	f.slot = uint8(slotOf(State(c)))
	if f.slot == uint8(slotOf(Pending)) {
		f.pending = &pendingOnly{}
	}
}

// state is the object's state key (State).
func (f *facts) state() string { return States[f.slot] }

// decided is when c, the facts' object, was decided (DecidedAt): a loop over
// its one or two conditions, asked by the queue order and by the rows.
func (f *facts) decided(c *certificatesv1.CertificateSigningRequest) time.Time {
	return DecidedAt(c)
}

// index returns the cache's index (c.mu held).
func (c *Cache) index() *index {
	if c.x == nil {
		c.x = newIndex()
	}
	return c.x
}

// stormsNow returns the storm index of the indexed CSRs (c.mu held), kept
// with the index per change.
func (c *Cache) stormsNow() *Storms { return c.index().storms }

// synced runs fn with the cache holding exactly items.
func (c *Cache) synced(items []*certificatesv1.CertificateSigningRequest, checks Checks, fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.index()
	x.storms.change(func() { x.sync(items, checks) })
	fn()
}

// Storms returns the storm index of items: cheap when the items are the
// ones the cache holds.
func (c *Cache) Storms(items []*certificatesv1.CertificateSigningRequest, env Checks) *Storms {
	var s *Storms
	c.synced(items, env, func() { s = c.stormsNow() })
	return s
}

// StormsOf groups the pending requests of items, without a cache (tests,
// and callers that hold no Cache).
func StormsOf(items []*certificatesv1.CertificateSigningRequest, env Checks) *Storms {
	return (&Cache{}).Storms(items, env)
}

// Len returns how many CSR objects the cache holds facts for.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.x == nil {
		return 0
	}
	return len(c.x.byName)
}

// decoded decodes the request once and keeps it: for pending requests,
// which the storm index, the queue order and every view of the pending tab
// read.
func (f *facts) decoded(c *certificatesv1.CertificateSigningRequest, env Checks) *pendingOnly {
	p := f.pending
	if p == nil { // a decided request: decoded, not kept (see request)
		p = &pendingOnly{}
	}
	p.decodeOnce.Do(func() {
		p.req, p.decodeErr = env.DecodeRequest(c.Spec.Request)
		if p.decodeErr != nil {
			p.req = nil
		}
	})
	return p
}

// request is the decoded spec.request. A pending request's is kept
// (decoded); a decided request's is decoded when asked and not kept, by
// env's transient decoder: a cluster holds tens of thousands of decided
// requests, whose rows a view shows a page of, and whose search text and
// findings are kept as text once worked out.
func (f *facts) request(c *certificatesv1.CertificateSigningRequest, env Checks) (*csr.Request, error) {
	if f.pending != nil {
		p := f.decoded(c, env)
		return p.req, p.decodeErr
	}
	req, err := env.decodeTransient(c.Spec.Request)
	if err != nil {
		return nil, err
	}
	return req, nil
}

// staticMatches reports whether the lower-cased search text of the object
// alone (its name's line, then Words.Static's lines, worded once) holds
// needle. A needle without a newline is within one line, so each part is
// searched where it is kept; one with a newline (a pasted text) is
// searched in the whole text, as one string.
func (f *facts) staticMatches(c *certificatesv1.CertificateSigningRequest, env Checks, w Words, needle string) bool {
	f.static(c, env, w)
	name := strings.ToLower(c.Name)
	if strings.Contains(needle, "\n") {
		return strings.Contains(name+"\n"+f.own+f.shared, needle)
	}
	return strings.Contains(name, needle) || strings.Contains(f.own, needle) || strings.Contains(f.shared, needle)
}

// static words the search text of the object alone once (own, shared).
func (f *facts) static(c *certificatesv1.CertificateSigningRequest, env Checks, w Words) {
	f.staticOnce.Do(func() {
		req, err := f.request(c, env)
		own, shared := w.Static(c, f.state(), req, err)
		f.own, f.shared = own, internText(shared)
	})
}

// check runs the checks but the duplicates finding (it is the only one that
// depends on other requests; see withDuplicates) and returns the findings.
// What the filter and the sort read of them is worked out once and kept
// (their text, lower-cased, and their rank); the findings themselves are
// kept for pending requests only: a decided request's are worked out again
// for the row that shows them, so tens of thousands of decided requests keep
// a string and an int each.
func (f *facts) check(c *certificatesv1.CertificateSigningRequest, env Checks, w Words) []csr.Finding {
	f.checkMu.Lock()
	defer f.checkMu.Unlock()
	if f.checked && f.pending != nil && (f.pending.findings != nil || f.noFindings) {
		return f.pending.findings
	}
	req, _ := f.request(c, env)
	fs := csr.Check(csr.SpecOf(c), req, csr.Env{
		NodeAddresses: env.NodeAddresses,
		MaxDuration:   env.MaxDuration,
	})
	if !f.checked {
		// The template of the findings text finds the CN in own.
		f.static(c, env, w)
		f.setFindingText(c, req, w.Findings(fs))
		f.checked, f.rank = true, packRank(checksRank(fs))
		f.noFindings = len(fs) == 0
		if f.pending != nil {
			f.pending.findings = fs
		}
	}
	return fs
}

// checkedText runs the checks once and returns the findings' text,
// lower-cased, as kept (a template when tmpl is not 0: findingsContain),
// and their rank (checksRank), without the findings.
func (f *facts) checkedText(c *certificatesv1.CertificateSigningRequest, env Checks, w Words) (text string, tmpl uint8, rank int) {
	f.checkMu.Lock()
	text, tmpl, packed, done := f.findingText, f.tmpl, f.rank, f.checked
	f.checkMu.Unlock()
	if done {
		return text, tmpl, unpackRank(packed)
	}
	f.check(c, env, w)
	f.checkMu.Lock()
	defer f.checkMu.Unlock()
	return f.findingText, f.tmpl, unpackRank(f.rank)
}

// packRank keeps a checksRank in 4 bytes: ranks of findings are below 4,000,
// no findings is math.MaxInt (math.MaxInt32 kept).
func packRank(r int) int32 { return int32(min(r, math.MaxInt32)) }

func unpackRank(r int32) int {
	if r == math.MaxInt32 {
		return math.MaxInt
	}
	return int(r)
}

// withDuplicates adds the duplicates finding to fs (a new slice; fs is shared).
func withDuplicates(fs []csr.Finding, others int) []csr.Finding {
	d := csr.CheckDuplicates(others)
	if len(d) == 0 {
		return fs
	}
	out := append(slices.Clone(fs), d...)
	csr.SortFindings(out)
	return out
}
