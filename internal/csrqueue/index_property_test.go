package csrqueue

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// gettingSource is a kube.Cache stand-in that also reads one CSR, as the
// informer's store does: a Queue over it follows the reported changes
// without listing.
type gettingSource struct{ source }

func (s *gettingSource) CSR(name string) (*certificatesv1.CertificateSigningRequest, error) {
	for _, c := range s.items {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, name)
}

// propWords words rows so that the text filter finds names, subjects,
// requesters, findings and ages, and so that the state column's order (by
// the badge's text) differs from the tabs' order.
type propWords struct{}

func (propWords) Status(state string) string {
	return map[string]string{Pending: "Waiting", Approved: "Approved", Issued: "Issued", Denied: "Denied", Failed: "Failed"}[state]
}
func (propWords) Static(c *certificatesv1.CertificateSigningRequest, state string, req *csr.Request, decodeErr error) (string, string) {
	return benchWords{}.Static(c, state, req, decodeErr)
}
func (propWords) Findings(fs []csr.Finding) string { return benchWords{}.Findings(fs) }
func (propWords) Moment(c *certificatesv1.CertificateSigningRequest, state string, decided, now time.Time) (string, string) {
	age := fmt.Sprintf("%dm", int(now.Sub(c.CreationTimestamp.Time).Minutes()))
	wait := ""
	if state == Approved && !decided.IsZero() {
		wait = fmt.Sprintf("waiting %dm", int(now.Sub(decided).Minutes()))
	}
	return age, wait
}

// propGen makes random CSRs from small pools of signers, requesters,
// subjects and times, so that storms, duplicate sets, equal times and
// requests that do not decode are common.
type propGen struct {
	r      *rand.Rand
	bodies map[string][]byte
	next   int
	now    time.Time
}

var (
	propSigners  = []string{clientSigner, kubeletClient, kubeletServe}
	propUsers    = []string{"jane", "bob", "system:node:w1", "system:node:w2"}
	propSubjects = []string{"jane", "bob", "system:node:w1", "system:node:w2", "shared"}
)

func newPropGen(t *testing.T, seed uint64) *propGen {
	g := &propGen{r: rand.New(rand.NewPCG(seed, 27)), bodies: map[string][]byte{}, now: benchNow}
	for _, s := range propSubjects {
		g.bodies[s] = testfixtures.SubjectPEM(t, s, "system:nodes")
	}
	g.bodies["bad"] = []byte("not a request")
	return g
}

func (g *propGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *propGen) csr() *certificatesv1.CertificateSigningRequest {
	g.next++
	name := fmt.Sprintf("csr-%03d", g.next)
	user := g.pick(propUsers)
	signer := g.pick(propSigners)
	if g.r.IntN(3) == 0 {
		// A runaway client: one requester, one signer, any subject, so that
		// its pending requests cross RequesterStormMin and fall below it.
		user, signer = "system:serviceaccount:ops:automation", clientSigner
	}
	body := g.bodies[g.pick(propSubjects)]
	if g.r.IntN(12) == 0 {
		body = g.bodies["bad"]
	}
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("uid-%d-%d", g.next, g.r.IntN(1000))),
			// Few distinct times: ties are broken by the name.
			CreationTimestamp: metav1.NewTime(g.now.Add(-time.Duration(g.r.IntN(8)) * 37 * time.Minute)),
			Labels:            map[string]string{"team": g.pick([]string{"a", "b"})}},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: body, SignerName: signer, Username: user,
			Groups: []string{"system:authenticated", "team-" + user}},
	}
	if g.r.IntN(3) == 0 {
		d := int32(600 * (1 + g.r.IntN(3)))
		c.Spec.ExpirationSeconds = &d
	}
	if g.r.IntN(2) == 0 {
		g.decide(c)
	}
	return c
}

// decide gives c a random decision (or none: pending).
func (g *propGen) decide(c *certificatesv1.CertificateSigningRequest) {
	at := metav1.NewTime(g.now.Add(-time.Duration(g.r.IntN(6)) * 11 * time.Minute))
	cond := func(ty certificatesv1.RequestConditionType) {
		cd := certificatesv1.CertificateSigningRequestCondition{Type: ty, Status: corev1.ConditionTrue}
		if g.r.IntN(4) == 0 {
			cd.LastTransitionTime = at
		} else {
			cd.LastUpdateTime = at
		}
		c.Status.Conditions = append(c.Status.Conditions, cd)
	}
	c.Status = certificatesv1.CertificateSigningRequestStatus{}
	switch g.r.IntN(5) {
	case 0: // still pending
	case 1:
		cond(certificatesv1.CertificateApproved)
	case 2:
		cond(certificatesv1.CertificateApproved)
		c.Status.Certificate = []byte("cert")
	case 3:
		cond(certificatesv1.CertificateDenied)
	case 4:
		cond(certificatesv1.CertificateApproved)
		cond(certificatesv1.CertificateFailed)
	}
}

// query is a random view; groups come from the storms of the moment.
func (g *propGen) query(st *Storms) Query {
	q := Query{Sort: g.pick(append([]string{""}, SortKeys...)), Desc: g.r.IntN(2) == 0, Page: g.r.IntN(4)}
	if g.r.IntN(3) > 0 {
		q.State = g.pick(States)
	}
	if g.r.IntN(5) == 0 {
		q.Filter = g.pick([]string{"csr-01", "jane", "node", "w2", "0m", "waiting", "bad", "zzz", "duplicate", "system"})
	}
	if g.r.IntN(5) == 0 {
		q.Signer = g.pick(append([]string{"example.com/none"}, propSigners...))
	}
	if g.r.IntN(6) == 0 {
		q.Requester = g.pick([]string{"jane", "node", "team-b", "authenticated", "nobody"})
	}
	if g.r.IntN(6) == 0 {
		q.Age = g.pick([]string{"lt1h", "gt1h", "lt24h"})
	}
	if g.r.IntN(5) == 0 {
		var ids []string
		for id := range st.storms {
			ids = append(ids, id)
		}
		for _, m := range st.members {
			ids = append(ids, m.dup.id)
		}
		slices.Sort(ids)
		if len(ids) > 0 && g.r.IntN(4) > 0 {
			q.Group = g.pick(ids)
		} else {
			q.Group = "s-000000000000"
		}
	}
	return q
}

func (g *propGen) labels() labels.Selector {
	switch g.r.IntN(6) {
	case 0:
		return labels.SelectorFromSet(labels.Set{"team": "a"})
	case 1:
		return labels.Everything()
	case 2:
		return labels.Nothing()
	}
	return nil
}

// describe is everything of a Result the presenter reads, as text.
func describe(r Result) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "total %d matched %d rows %d page %d decidable %v\ncounts %v\nsigners %v\n",
		r.Total, r.Matched, r.Rows, r.Page, r.Decidable, r.Counts, r.Signers)
	if r.Group != nil {
		fmt.Fprintf(&sb, "group %s %d\n", r.Group.ID, len(r.Group.Members()))
	}
	fmt.Fprintf(&sb, "storms %d\n", r.Storms.Len())
	for _, it := range r.Items {
		fmt.Fprintf(&sb, "%s %s bad=%v decided=%v", it.CSR.Name, it.State, it.Bad, it.Decided.Unix())
		if it.Storm != nil {
			fmt.Fprintf(&sb, " storm=%s of %d checks=%s", it.Storm.ID, len(it.Storm.Members()), it.ChecksOf.CSR.Name)
		}
		fmt.Fprintf(&sb, " findings=%d dup=%s\n", len(it.Findings()), it.DuplicatesID())
	}
	return sb.String()
}

func describeChange(ch Change) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "total %d counts %v\n", ch.Total, ch.Counts)
	for _, it := range ch.Rows {
		fmt.Fprintf(&sb, "row %s %s bad=%v", it.CSR.Name, it.State, it.Bad)
		if it.Storm != nil {
			fmt.Fprintf(&sb, " storm=%s of %d", it.Storm.ID, len(it.Storm.Members()))
		}
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "removed %v\n", ch.Removed)
	return sb.String()
}

// change applies a few random changes to src, reports them as the informer
// does, and returns the changed names.
func (g *propGen) change(src *gettingSource) []string {
	var names []string
	for range 1 + g.r.IntN(6) {
		switch k := g.r.IntN(10); {
		case k < 3 || len(src.items) < 5: // a new request, often into a storm
			c := g.csr()
			if g.r.IntN(2) == 0 {
				c.Status = certificatesv1.CertificateSigningRequestStatus{}
			}
			src.items = append(src.items, c)
			names = append(names, c.Name)
		case k < 6: // decided (or decided again: a new object either way)
			i := g.r.IntN(len(src.items))
			c := src.items[i].DeepCopy()
			g.decide(c)
			src.items[i] = c
			names = append(names, c.Name)
		case k < 8: // another update (an annotation): a new object, the same facts
			i := g.r.IntN(len(src.items))
			c := src.items[i].DeepCopy()
			c.Annotations = map[string]string{"touched": fmt.Sprint(g.next)}
			src.items[i] = c
			names = append(names, c.Name)
		default: // deleted
			i := g.r.IntN(len(src.items))
			names = append(names, src.items[i].Name)
			src.items = slices.Delete(src.items, i, i+1)
		}
	}
	for _, n := range names {
		src.change(kube.CSRs, n)
	}
	return names
}

func requesterStorms(s *Storms) int {
	n := 0
	if s != nil {
		for _, st := range s.storms {
			if st.ByRequester {
				n++
			}
		}
	}
	return n
}
