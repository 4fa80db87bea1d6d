package present

import (
	"slices"
	"strings"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRQueueCache keeps what the queue derives from each CSR (state, decoded
// request, subject line, the search text that depends on nothing else, the
// checks' findings) between views, so that a queue of 50,000 CSRs does not
// decode, check and lay out every request again on each filter keystroke.
//
// Entries are keyed by the object pointer: the informer cache never modifies
// an object it handed out, a change arrives as a new object, so an entry can
// never be stale; each view keeps only the entries of the objects it was
// given, which bounds the cache to one entry per CSR in the cluster.
// One cache must serve one CSRChecksEnv (the findings depend on it). Safe for
// concurrent use. The zero value is ready.
type CSRQueueCache struct {
	mu      sync.Mutex
	entries map[*certificatesv1.CertificateSigningRequest]*csrFacts
}

// csrFacts is what the queue knows of one CSR object, computed once.
type csrFacts struct {
	state   string
	status  model.Badge
	decided time.Time

	decodeOnce sync.Once
	req        *csr.Request // nil when spec.request does not decode
	decodeErr  error
	subject    string // the decoded subject line, or the decoding error
	dur        string // requested duration
	static     string // lower-cased search text that depends on nothing but the object

	checkMu     sync.Mutex
	checked     bool
	dupsFor     []string // the duplicates the findings were computed with
	findings    []csr.Finding
	findingText string // the findings as the row shows them, lower-cased, for the filter
}

// facts returns the facts of every item, in order, creating the missing ones.
// Entries of objects no longer given (deleted, or replaced by a new version)
// are dropped once they are as many as the live ones.
func (c *CSRQueueCache) facts(items []*certificatesv1.CertificateSigningRequest) []*csrFacts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[*certificatesv1.CertificateSigningRequest]*csrFacts, len(items))
	}
	out := make([]*csrFacts, len(items))
	for i, it := range items {
		f := c.entries[it]
		if f == nil {
			f = &csrFacts{state: CSRState(it), status: CSRStatus(it), decided: decidedAt(it)}
			c.entries[it] = f
		}
		out[i] = f
	}
	if len(c.entries) > 2*len(items)+64 {
		next := make(map[*certificatesv1.CertificateSigningRequest]*csrFacts, len(items))
		for i, it := range items {
			next[it] = out[i]
		}
		c.entries = next
	}
	return out
}

// Len returns how many CSR objects the cache holds facts for.
func (c *CSRQueueCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// decoded decodes the request once.
func (f *csrFacts) decoded(c *certificatesv1.CertificateSigningRequest, env CSRChecksEnv) *csrFacts {
	f.decodeOnce.Do(func() {
		f.req, f.decodeErr = env.decode(c.Spec.Request)
		if f.decodeErr != nil {
			f.req, f.subject = nil, "Bad request: "+f.decodeErr.Error()
		} else {
			f.subject = subjectSummary(f.req)
		}
		f.dur, _ = requestedDuration(c)
		var sb strings.Builder
		for _, s := range []string{c.Name, f.subject, c.Spec.SignerName, c.Spec.Username, f.dur, f.status.Text} {
			sb.WriteString(strings.ToLower(s))
			sb.WriteByte('\n')
		}
		f.static = sb.String()
	})
	return f
}

// check runs the checks once for the duplicates given; a CSR whose duplicates
// changed (another request came or went) is checked again. It returns the
// findings and their text as the row shows them, lower-cased.
func (f *csrFacts) check(c *certificatesv1.CertificateSigningRequest, dups []string, env CSRChecksEnv) ([]csr.Finding, string) {
	f.decoded(c, env)
	f.checkMu.Lock()
	defer f.checkMu.Unlock()
	if !f.checked || !slices.Equal(f.dupsFor, dups) {
		f.findings = csr.Check(csr.SpecOf(c), f.req, csr.Env{
			NodeAddresses: env.NodeAddresses,
			MaxDuration:   env.MaxDuration,
			Duplicates:    dups,
		})
		var sb strings.Builder
		for _, m := range findingModels(f.findings) {
			sb.WriteString(strings.ToLower(m.Label + " " + m.Message))
			sb.WriteByte('\n')
		}
		f.checked, f.dupsFor, f.findingText = true, dups, sb.String()
	}
	return f.findings, f.findingText
}
