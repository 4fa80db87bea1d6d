package csrqueue

import (
	"slices"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// Cache keeps what the queue derives from each CSR (state, decoded request,
// the search text that depends on nothing else, the checks' findings)
// between views, so that a queue of 50,000 CSRs does not decode, check and
// word every request again on each filter keystroke.
//
// Entries are keyed by the object pointer: the informer cache never modifies
// an object it handed out, a change arrives as a new object, so an entry can
// never be stale; each view keeps only the entries of the objects it was
// given, which bounds the cache to one entry per CSR in the cluster.
// One cache must serve one Checks and one Words (the findings and the search
// text depend on them). Safe for concurrent use. The zero value is ready.
type Cache struct {
	mu      sync.Mutex
	entries map[*certificatesv1.CertificateSigningRequest]*facts
	// view counts the calls of load; an entry stamped with the previous
	// count was in the previous set of objects.
	view    uint64
	lastLen int
	// storms groups the pending requests of the last set of objects: rebuilt
	// only when that set changes, so a view of an unchanged cluster reads it.
	storms *Storms
	// before is the index the last rebuild replaced: a live update asks it
	// which storm a deleted request was in.
	before *Storms
}

// facts is what the queue knows of one CSR object, computed once.
type facts struct {
	state   string
	decided time.Time

	decodeOnce sync.Once
	req        *csr.Request // nil when spec.request does not decode
	decodeErr  error

	staticOnce sync.Once
	static     string // lower-cased search text that depends on nothing but the object

	seen uint64 // the Cache.view this object was last given in

	checkMu     sync.Mutex
	checked     bool
	findings    []csr.Finding // all but the duplicates finding, which depends on other requests
	findingText string        // the findings as the row shows them, lower-cased, for the filter
}

// load returns the facts of every item, in order, creating the missing ones,
// and the storm index of the items. The index is rebuilt (O(n)) only when the
// set of objects differs from the previous call's: the informer hands out a
// new object for every change, so the same pointers mean the same cluster.
// Entries of objects no longer given (deleted, or replaced by a new version)
// are dropped once they are as many as the live ones.
func (c *Cache) load(items []*certificatesv1.CertificateSigningRequest, env Checks) ([]*facts, *Storms) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[*certificatesv1.CertificateSigningRequest]*facts, len(items))
	}
	c.view++
	changed := c.storms == nil || len(items) != c.lastLen
	out := make([]*facts, len(items))
	for i, it := range items {
		f := c.entries[it]
		if f == nil {
			f = &facts{state: State(it), decided: DecidedAt(it)}
			c.entries[it] = f
		}
		changed = changed || f.seen != c.view-1
		f.seen = c.view
		out[i] = f
	}
	c.lastLen = len(items)
	if changed {
		c.before, c.storms = c.storms, groupStorms(items, out, env)
	}
	if len(c.entries) > 2*len(items)+64 {
		next := make(map[*certificatesv1.CertificateSigningRequest]*facts, len(items))
		for i, it := range items {
			next[it] = out[i]
		}
		c.entries = next
	}
	return out, c.storms
}

// Storms returns the storm index of items (see load): cheap when the items
// are the ones the last call was given.
func (c *Cache) Storms(items []*certificatesv1.CertificateSigningRequest, env Checks) *Storms {
	_, s := c.load(items, env)
	return s
}

// previous is the storm index the last rebuild replaced.
func (c *Cache) previous() *Storms {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.before
}

// groupStorms groups the pending requests that decode.
func groupStorms(items []*certificatesv1.CertificateSigningRequest, facts []*facts, env Checks) *Storms {
	var pending []Member
	for i, c := range items {
		if f := facts[i]; f.state == Pending && f.decoded(c, env).req != nil {
			pending = append(pending, Member{Name: c.Name, UID: string(c.UID), Signer: c.Spec.SignerName,
				Subject: f.req.Subject, Requester: c.Spec.Username, Created: c.CreationTimestamp.Time})
		}
	}
	return GroupStorms(pending)
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
	return len(c.entries)
}

// decoded decodes the request once.
func (f *facts) decoded(c *certificatesv1.CertificateSigningRequest, env Checks) *facts {
	f.decodeOnce.Do(func() {
		f.req, f.decodeErr = env.DecodeRequest(c.Spec.Request)
		if f.decodeErr != nil {
			f.req = nil
		}
	})
	return f
}

// staticText is the lower-cased search text of the object alone, worded once.
func (f *facts) staticText(c *certificatesv1.CertificateSigningRequest, env Checks, w Words) string {
	f.decoded(c, env)
	f.staticOnce.Do(func() { f.static = w.Static(c, f.state, f.req, f.decodeErr) })
	return f.static
}

// check runs the checks but the duplicates finding once (it is the only one
// that depends on other requests; see withDuplicates). It returns the
// findings and their text as the row shows them, lower-cased.
func (f *facts) check(c *certificatesv1.CertificateSigningRequest, env Checks, w Words) ([]csr.Finding, string) {
	f.decoded(c, env)
	f.checkMu.Lock()
	defer f.checkMu.Unlock()
	if !f.checked {
		f.findings = csr.Check(csr.SpecOf(c), f.req, csr.Env{
			NodeAddresses: env.NodeAddresses,
			MaxDuration:   env.MaxDuration,
		})
		f.checked, f.findingText = true, w.Findings(f.findings)
	}
	return f.findings, f.findingText
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
