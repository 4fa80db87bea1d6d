package present

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var csrColumns = []column{
	{"name", "Name", true},
	{"age", "Age", true},
	{"signer", "Signer", true},
	{"requestor", "Requestor", true},
	{"duration", "Requested duration", true},
	{"condition", "Condition", true},
}

// CSRStatus is the state of a CSR as an approver thinks of it. "Approved" without
// a certificate is not done: the signer has not (yet) issued.
func CSRStatus(c *certificatesv1.CertificateSigningRequest) model.Badge {
	return stateBadge(CSRState(c))
}

// stateBadge is the badge of a state key.
func stateBadge(state string) model.Badge {
	switch state {
	case CSRDenied:
		return model.Badge{Text: "Denied", Tone: model.ToneError}
	case CSRFailed:
		return model.Badge{Text: "Failed", Tone: model.ToneError, Hint: "the signer could not issue a certificate"}
	case CSRIssued:
		return model.Badge{Text: "Approved, Issued", Tone: model.ToneOK}
	case CSRApproved:
		return model.Badge{Text: "Approved, not issued", Tone: model.TonePending, Hint: "approved, but the signer has not issued a certificate yet"}
	default:
		return pendingBadge
	}
}

var pendingBadge = model.Badge{Text: "Pending", Tone: model.TonePending, Hint: "waiting for approval"}

func requestedDuration(c *certificatesv1.CertificateSigningRequest) (string, string) {
	if c.Spec.ExpirationSeconds == nil {
		return "<none>", padInt(0)
	}
	s := int64(*c.Spec.ExpirationSeconds)
	return duration.HumanDuration(time.Duration(s) * time.Second), padInt(s)
}

// CSRList lays out the CSR list page.
func CSRList(items []*certificatesv1.CertificateSigningRequest, q ListQuery, now time.Time) model.ListPage {
	const kind = "csrs"
	action := urls.List(kind)
	rows := make([]row, 0, len(items))
	for _, c := range items {
		ageC, ageKey := ageCell(c.CreationTimestamp, now)
		dur, durKey := requestedDuration(c)
		status := CSRStatus(c)
		cond := model.Cell{Badges: []model.Badge{status}}
		if _, err := csr.Decode(c.Spec.Request); err != nil {
			cond.Badges = append(cond.Badges, model.Badge{Text: "Bad request", Tone: model.ToneError, Hint: err.Error()})
		}
		rows = append(rows, newRow(kind, action, c.Name, []model.Cell{
			ageC,
			{Text: c.Spec.SignerName, Mono: true},
			{Text: c.Spec.Username, Mono: true},
			{Text: dur},
			cond,
		}, []string{ageKey, c.Spec.SignerName, c.Spec.Username, durKey, status.Text}))
	}
	return table(kind, "CertificateSigningRequests", action, csrColumns, rows, q)
}

// CSRDetail lays out one CSR.
func CSRDetail(c *certificatesv1.CertificateSigningRequest, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(c.CreationTimestamp, now)
	dur, _ := requestedDuration(c)
	usages := make([]string, 0, len(c.Spec.Usages))
	for _, u := range c.Spec.Usages {
		usages = append(usages, string(u))
	}
	p := model.DetailPage{
		KindID:    "csrs",
		KindTitle: "CertificateSigningRequests",
		Name:      c.Name,
		Status:    CSRStatus(c),
		Fields: []model.Field{
			{Label: "Signer", Value: c.Spec.SignerName, Mono: true},
			{Label: "Requestor", Value: c.Spec.Username, Mono: true},
			{Label: "Groups", Value: join(c.Spec.Groups), Mono: true},
			{Label: "Requestor UID", Value: orDash(c.Spec.UID), Mono: true},
			{Label: "Usages", Value: join(usages)},
			{Label: "Requested duration", Value: dur},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	if req, err := csr.Decode(c.Spec.Request); err != nil {
		msg := err.Error()
		if CSRState(c) == CSRPending {
			msg += "\nIt cannot be approved or denied: the API server validates spec.request on every change and refuses both. Delete it instead."
		}
		p.Problems = append(p.Problems, model.Banner{
			Tone: model.ToneError, Title: "The request cannot be decoded", Message: msg, TestID: "banner-bad-request",
		})
	} else {
		p.Sections = append(p.Sections, model.Section{
			Title: "Decoded request", TestID: "decoded-request",
			Fields: []model.Field{
				{Label: "Subject", Value: orDash(req.Subject), Mono: true},
				{Label: "Common name", Value: orDash(req.CommonName), Mono: true},
				{Label: "Organizations", Value: join(req.Organizations), Mono: true},
				{Label: "Organizational units", Value: join(req.OrganizationalUnit), Mono: true},
				sanField("DNS names", req.DNSNames),
				sanField("IP addresses", req.IPAddresses),
				sanField("Email addresses", req.EmailAddresses),
				sanField("URIs", req.URIs),
				{Label: "Public key", Value: req.PublicKey},
				{Label: "Signature algorithm", Value: req.SignatureAlgorithm},
				{Label: "Requested extensions", Value: extensionsText(req.Extensions), Mono: true,
					Hint: "Kubernetes signers take usages from spec.usages and ignore requested extensions other than the subjectAltNames."},
			},
		})
	}
	if len(c.Status.Certificate) > 0 {
		p.Sections = append(p.Sections, issuedSection(c.Status.Certificate, now))
	}
	for _, cond := range c.Status.Conditions {
		tone := model.ToneOK
		if cond.Type != certificatesv1.CertificateApproved {
			tone = model.ToneError
		}
		a, title, _ := age(cond.LastUpdateTime, now)
		p.Conditions = append(p.Conditions, model.Condition{
			Type: string(cond.Type), Status: string(cond.Status), Tone: tone,
			Reason: cond.Reason, Message: cond.Message, Age: a, Time: title,
		})
	}
	return p
}

// CSRDecided reports whether a CSR already carries an Approved or Denied
// condition; those are permanent, so the UI offers no further decision.
func CSRDecided(c *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved || cond.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}

func issuedSection(pemBytes []byte, now time.Time) model.Section {
	s := model.Section{Title: "Issued certificate", TestID: "issued-certificate"}
	var chain []*x509.Certificate
	rest := pemBytes
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			chain = append(chain, cert)
		}
	}
	if len(chain) == 0 {
		s.Fields = []model.Field{{Label: "Problem", Value: "status.certificate holds no parsable certificate"}}
		return s
	}
	leaf := chain[0]
	left := leaf.NotAfter.Sub(now)
	leftText := duration.HumanDuration(left) + " left"
	if left <= 0 {
		leftText = "expired"
	}
	s.Fields = []model.Field{
		{Label: "Subject", Value: leaf.Subject.String(), Mono: true},
		{Label: "Issuer", Value: leaf.Issuer.String(), Mono: true},
		{Label: "Serial", Value: leaf.SerialNumber.Text(16), Mono: true},
		{Label: "Not before", Value: leaf.NotBefore.UTC().Format(time.RFC3339)},
		{Label: "Not after", Value: leaf.NotAfter.UTC().Format(time.RFC3339) + " (" + leftText + ")"},
		sanField("DNS names", leaf.DNSNames),
		sanField("IP addresses", ipStrings(leaf.IPAddresses)),
		{Label: "Chain length", Value: itoa(len(chain))},
	}
	return s
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

// extensionsText lists requested extensions, marking critical ones.
func extensionsText(exts []csr.Extension) string {
	names := make([]string, 0, len(exts))
	for _, e := range exts {
		n := e.Name
		if e.Critical {
			n += " (critical)"
		}
		names = append(names, n)
	}
	return join(names)
}
