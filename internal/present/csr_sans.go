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
// SANsShown subject alternative names, and how many it leaves out. The row
// shows only that count ("195 more"); the names themselves are fetched when
// the row's disclosure opens (MoreSANs): a page of 200-SAN requests would
// otherwise carry 15 KB of names per row that nobody opened.
func subjectLine(r *csr.Request) (string, int) {
	total := len(r.DNSNames) + len(r.IPAddresses) + len(r.EmailAddresses) + len(r.URIs)
	if total <= SANsShown {
		return subjectSummary(r), 0
	}
	short := *r
	left := SANsShown
	take := func(vs []string) []string {
		n := min(left, len(vs))
		left -= n
		return vs[:n]
	}
	short.DNSNames = take(r.DNSNames)
	short.IPAddresses = take(r.IPAddresses)
	short.EmailAddresses = take(r.EmailAddresses)
	short.URIs = take(r.URIs)
	return subjectSummary(&short), total - SANsShown
}

// MoreSANs is what subjectLine leaves out, each labelled ("DNS x", "IP y"),
// in the order the line shows them: DNS names, IPs, emails, URIs.
func MoreSANs(r *csr.Request) []string {
	skip := SANsShown
	var more []string
	for _, group := range []struct {
		label  string
		values []string
	}{{"DNS", r.DNSNames}, {"IP", r.IPAddresses}, {"email", r.EmailAddresses}, {"URI", r.URIs}} {
		n := min(skip, len(group.values))
		skip -= n
		for _, v := range group.values[n:] {
			more = append(more, group.label+" "+v)
		}
	}
	return more
}

// sanField is a field of SANs: the first SANsShown, then "N more".
func sanField(label string, values []string) model.Field {
	v, more := collapsed(values, SANsShown)
	return model.Field{Label: label, Value: v, More: more, Mono: true}
}
