package present

import (
	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// SANsShown is how many subject alternative names a CSR's queue row and each
// SAN field of its page show before "N more": a serving certificate's
// request can carry hundreds.
const SANsShown = 5

// collapsed splits values into the first shown, joined for a field, and the
// rest, which the page puts behind "N more".
func collapsed(values []string, shown int) (string, []string) {
	if len(values) <= shown {
		return join(values), nil
	}
	return join(values[:shown]), values[shown:]
}

// subjectLine is the queue's subject line: subjectSummary with at most
// SANsShown subject alternative names; the others ("DNS x", "IP y") are
// returned for the row's "N more".
func subjectLine(r *csr.Request) (string, []string) {
	total := len(r.DNSNames) + len(r.IPAddresses) + len(r.EmailAddresses) + len(r.URIs)
	if total <= SANsShown {
		return subjectSummary(r), nil
	}
	short := *r
	left := SANsShown
	var more []string
	take := func(label string, vs []string) []string {
		n := min(left, len(vs))
		left -= n
		for _, v := range vs[n:] {
			more = append(more, label+" "+v)
		}
		return vs[:n]
	}
	short.DNSNames = take("DNS", r.DNSNames)
	short.IPAddresses = take("IP", r.IPAddresses)
	short.EmailAddresses = take("email", r.EmailAddresses)
	short.URIs = take("URI", r.URIs)
	return subjectSummary(&short), more
}

// sanField is a field of SANs: the first SANsShown, then "N more".
func sanField(label string, values []string) model.Field {
	v, more := collapsed(values, SANsShown)
	return model.Field{Label: label, Value: v, More: more, Mono: true}
}
