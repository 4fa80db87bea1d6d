package csr

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Severity ranks a finding. Danger means approving would grant more than the
// request seems to ask for (or something nobody should get); Warning means a
// person should look before approving (or the signer will refuse); Info is context.
type Severity int

// Severities, weakest first.
const (
	Info Severity = iota
	Warning
	Danger
)

// String names the severity for display and logs.
func (s Severity) String() string {
	switch s {
	case Danger:
		return "danger"
	case Warning:
		return "warning"
	default:
		return "info"
	}
}

// Finding is the result of one check.
type Finding struct {
	Check    string // stable id, e.g. "privileged-group"
	Severity Severity
	Message  string
}

// Spec is what the checks read from a CSR besides its decoded request.
type Spec struct {
	Signer            string
	Usages            []string
	ExpirationSeconds *int32
	Username          string
	Groups            []string
}

// SpecOf takes the checked fields from a CSR object.
func SpecOf(c *certificatesv1.CertificateSigningRequest) Spec {
	s := Spec{
		Signer:            c.Spec.SignerName,
		ExpirationSeconds: c.Spec.ExpirationSeconds,
		Username:          c.Spec.Username,
		Groups:            c.Spec.Groups,
	}
	for _, u := range c.Spec.Usages {
		s.Usages = append(s.Usages, string(u))
	}
	return s
}

// Env holds facts from outside the CSR that some checks compare with.
type Env struct {
	// NodeAddresses returns the addresses (any type: hostname, DNS names, IPs) of
	// the Node object name, or ok=false when no such Node exists. Nil means the
	// caller does not know Nodes at all; the kubelet-serving check says so.
	NodeAddresses func(name string) (addresses []string, ok bool)
	// MaxDuration overrides the longest certificate a signer issues; signers
	// absent from it use SignerMaxDuration.
	MaxDuration map[string]time.Duration
	// Duplicates are the names of the other pending CSRs for the same signer
	// and subject (see Duplicates).
	Duplicates []string
}

// DefaultSigningDuration is kube-controller-manager's --cluster-signing-duration
// default: the longest certificate its built-in signers issue, whatever a CSR asks.
const DefaultSigningDuration = 8760 * time.Hour

const (
	nodeUserPrefix    = "system:node:"
	nodesGroup        = "system:nodes"
	bootstrapPrefix   = "system:bootstrap:"
	bootstrapperGroup = "system:bootstrappers"
	// legacyUnknownSigner is only named in certificates/v1beta1; kube-controller-manager still signs for it.
	legacyUnknownSigner = "kubernetes.io/legacy-unknown"
)

// SignerMaxDuration returns the longest certificate a well-known signer issues:
// kube-controller-manager's signers cap every certificate at
// --cluster-signing-duration. Other signers are unknown (ok=false).
func SignerMaxDuration(signer string) (time.Duration, bool) {
	switch signer {
	case certificatesv1.KubeAPIServerClientSignerName, certificatesv1.KubeAPIServerClientKubeletSignerName,
		certificatesv1.KubeletServingSignerName, legacyUnknownSigner:
		return DefaultSigningDuration, true
	}
	return 0, false
}

// Check runs every check that applies to the CSR's signer and returns the
// findings, most severe first. req is nil when spec.request does not decode;
// then only the checks of the spec run (the decode error is the caller's to show).
func Check(spec Spec, req *Request, env Env) []Finding {
	var out []Finding
	if req != nil {
		switch spec.Signer {
		case certificatesv1.KubeAPIServerClientSignerName:
			out = append(out, CheckAPIServerClient(spec, req)...)
		case certificatesv1.KubeAPIServerClientKubeletSignerName:
			out = append(out, CheckKubeletClient(spec, req)...)
		case certificatesv1.KubeletServingSignerName:
			out = append(out, CheckKubeletServing(spec, req, env.NodeAddresses)...)
		}
		out = append(out, CheckKey(req)...)
		out = append(out, CheckCA(spec, req)...)
		out = append(out, CheckRequester(spec, req)...)
	}
	out = append(out, CheckDuration(spec, env.MaxDuration)...)
	out = append(out, CheckDuplicates(env.Duplicates)...)
	SortFindings(out)
	return out
}

// SortFindings orders findings most severe first, keeping the order of equals.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int { return cmp.Compare(b.Severity, a.Severity) })
}

// Worst returns the highest severity among fs, and false for none.
func Worst(fs []Finding) (Severity, bool) {
	if len(fs) == 0 {
		return Info, false
	}
	w := fs[0].Severity
	for _, f := range fs[1:] {
		w = max(w, f.Severity)
	}
	return w, true
}

// privilegedGroups are groups a client certificate must not carry without a
// very good reason: RBAC (or no authorization at all) grants them cluster-wide power.
var privilegedGroups = map[string]string{
	"system:masters":         "bypasses all authorization; no RBAC change can revoke it before the certificate expires",
	"kubeadm:cluster-admins": "is bound to cluster-admin by kubeadm",
}

// CheckAPIServerClient checks a kubernetes.io/kube-apiserver-client request:
// the groups and user name the certificate would authenticate as, and its usages.
func CheckAPIServerClient(spec Spec, req *Request) []Finding {
	var out []Finding
	for _, o := range req.Organizations {
		if why, ok := privilegedGroups[o]; ok {
			out = append(out, Finding{"privileged-group", Danger, fmt.Sprintf("Subject O includes %s, which %s.", o, why)})
		} else if strings.HasPrefix(o, "system:") {
			out = append(out, Finding{"system-group", Warning, fmt.Sprintf("Subject O includes %s, a group reserved for Kubernetes components and identities.", o)})
		}
	}
	cn := req.CommonName
	switch {
	case strings.HasPrefix(cn, nodeUserPrefix):
		out = append(out, Finding{"impersonates-node", Danger, fmt.Sprintf("CN %s is a node's user name: the certificate would authenticate as that node. Nodes use the kube-apiserver-client-kubelet signer.", cn)})
	case strings.HasPrefix(cn, "system:serviceaccount:"):
		out = append(out, Finding{"impersonates-serviceaccount", Danger, fmt.Sprintf("CN %s is a service account's user name: the certificate would act as that service account, outside its token's lifetime and audience.", cn)})
	case strings.HasPrefix(cn, "system:"):
		out = append(out, Finding{"system-user", Warning, fmt.Sprintf("CN %s is in the system: namespace of user names reserved for Kubernetes components.", cn)})
	}
	var extra []string
	client := false
	for _, u := range spec.Usages {
		switch certificatesv1.KeyUsage(u) {
		case certificatesv1.UsageClientAuth:
			client = true
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		default:
			extra = append(extra, u)
		}
	}
	if len(extra) > 0 {
		out = append(out, Finding{"usages", Warning, fmt.Sprintf("Usages other than client auth, digital signature and key encipherment (%s): the kube-apiserver-client signer will mark the request Failed.", strings.Join(extra, ", "))})
	}
	if !client {
		out = append(out, Finding{"usages", Warning, "Usages lack client auth: the kube-apiserver-client signer will mark the request Failed."})
	}
	return out
}

// nodeSubject checks the subject rules both kubelet signers share, and returns
// the node name from the CN ("" when the CN is not a node's).
func nodeSubject(req *Request) (string, []Finding) {
	var out []Finding
	node, isNode := strings.CutPrefix(req.CommonName, nodeUserPrefix)
	if !isNode || node == "" {
		out = append(out, Finding{"node-cn", Warning, fmt.Sprintf("CN %q is not system:node:<name>: the signer will mark the request Failed.", req.CommonName)})
		node = ""
	}
	if !slices.Equal(req.Organizations, []string{nodesGroup}) {
		out = append(out, Finding{"node-org", Warning, fmt.Sprintf("Subject O is %s, not exactly system:nodes: the signer will mark the request Failed.", listOrNone(req.Organizations))})
	}
	return node, out
}

// usagesEqual reports whether usages is exactly one of the allowed sets.
func usagesEqual(usages []string, allowed ...[]certificatesv1.KeyUsage) bool {
	have := slices.Clone(usages)
	slices.Sort(have)
	have = slices.Compact(have)
	for _, set := range allowed {
		want := make([]string, 0, len(set))
		for _, u := range set {
			want = append(want, string(u))
		}
		slices.Sort(want)
		if slices.Equal(have, want) {
			return true
		}
	}
	return false
}

func isBootstrap(spec Spec) bool {
	return strings.HasPrefix(spec.Username, bootstrapPrefix) || slices.Contains(spec.Groups, bootstrapperGroup)
}

// CheckKubeletClient checks a kubernetes.io/kube-apiserver-client-kubelet request:
// CN system:node:<name>, O system:nodes, no SANs, and a requester that is that
// node (renewal) or a bootstrap identity (joining).
func CheckKubeletClient(spec Spec, req *Request) []Finding {
	node, out := nodeSubject(req)
	if n := len(req.DNSNames) + len(req.IPAddresses) + len(req.EmailAddresses) + len(req.URIs); n > 0 {
		out = append(out, Finding{"sans", Warning, "The request has subjectAltNames; kubelet client certificates have none: the signer will mark the request Failed."})
	}
	du, ke, ca := certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth
	if !usagesEqual(spec.Usages, []certificatesv1.KeyUsage{du, ca}, []certificatesv1.KeyUsage{du, ke, ca}) {
		out = append(out, Finding{"usages", Warning, fmt.Sprintf("Usages are %s, not digital signature + client auth (+ key encipherment): the signer will mark the request Failed.", listOrNone(spec.Usages))})
	}
	switch {
	case node != "" && spec.Username == req.CommonName:
	case isBootstrap(spec):
	case strings.HasPrefix(spec.Username, nodeUserPrefix):
		out = append(out, Finding{"requester", Danger, fmt.Sprintf("Requested by %s, another node: a node asking for a client certificate of %s would gain that node's access.", spec.Username, req.CommonName)})
	default:
		out = append(out, Finding{"requester", Warning, fmt.Sprintf("Requested by %s, neither the node itself nor a bootstrap identity (system:bootstrap:… or group system:bootstrappers).", orUnknown(spec.Username))})
	}
	return out
}

// CheckKubeletServing checks a kubernetes.io/kubelet-serving request: CN
// system:node:<name>, O system:nodes, requested by that node, only DNS and IP
// SANs, and those SANs among the addresses of the Node object when it exists.
// nodeAddresses nil means Nodes are not known to the caller.
func CheckKubeletServing(spec Spec, req *Request, nodeAddresses func(string) ([]string, bool)) []Finding {
	node, out := nodeSubject(req)
	if len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		out = append(out, Finding{"sans", Warning, "The request has email or URI subjectAltNames; kubelet serving certificates may only name DNS names and IPs: the signer will mark the request Failed."})
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		out = append(out, Finding{"sans", Warning, "The request names no DNS name or IP: the signer will mark the request Failed."})
	}
	du, ke, sa := certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth
	if !usagesEqual(spec.Usages, []certificatesv1.KeyUsage{du, sa}, []certificatesv1.KeyUsage{du, ke, sa}) {
		out = append(out, Finding{"usages", Warning, fmt.Sprintf("Usages are %s, not digital signature + server auth (+ key encipherment): the signer will mark the request Failed.", listOrNone(spec.Usages))})
	}
	if node != "" && spec.Username != req.CommonName {
		out = append(out, Finding{"requester", Danger, fmt.Sprintf("Requested by %s, not by the node %s: only a node should ask for its own serving certificate.", orUnknown(spec.Username), node)})
	}
	if node == "" || len(req.DNSNames)+len(req.IPAddresses) == 0 {
		return out
	}
	if nodeAddresses == nil {
		return append(out, Finding{"node-unknown", Info, fmt.Sprintf("Node %s not looked up here (the queue reads no Nodes; the request's own page does, where your identity may read Nodes), so the DNS names and IPs were not compared with the node's addresses.", node)})
	}
	addrs, ok := nodeAddresses(node)
	if !ok {
		return append(out, Finding{"node-missing", Warning, fmt.Sprintf("There is no Node named %s, so the DNS names and IPs cannot be confirmed as its addresses.", node)})
	}
	if missing := sansNotIn(req, addrs); len(missing) > 0 {
		out = append(out, Finding{"node-addresses", Danger, fmt.Sprintf("Not addresses of Node %s: %s. A serving certificate for other names lets the node impersonate them.", node, strings.Join(missing, ", "))})
	}
	return out
}

// sansNotIn lists the request's DNS names and IPs that are none of addrs.
func sansNotIn(req *Request, addrs []string) []string {
	var missing []string
	for _, d := range req.DNSNames {
		if !slices.ContainsFunc(addrs, func(a string) bool { return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(d, ".")) }) {
			missing = append(missing, d)
		}
	}
	for _, s := range req.IPAddresses {
		ip := net.ParseIP(s)
		if !slices.ContainsFunc(addrs, func(a string) bool { b := net.ParseIP(a); return b != nil && b.Equal(ip) }) {
			missing = append(missing, s)
		}
	}
	return missing
}

// minRSABits is the smallest RSA key NIST SP 800-131A accepts.
const minRSABits = 2048

// CheckKey flags keys too small to trust.
func CheckKey(req *Request) []Finding {
	if req.KeyAlgorithm == "RSA" && req.KeyBits < minRSABits {
		return []Finding{{"key-size", Danger, fmt.Sprintf("RSA key of %d bits: below %d bits, it can be factored with feasible effort.", req.KeyBits, minRSABits)}}
	}
	return nil
}

// CheckCA flags a request for a CA certificate (basicConstraints CA:TRUE) made
// to a signer outside kubernetes.io: such signers may honour requested
// extensions, and a CA certificate can issue any other. The kubernetes.io
// signers ignore requested extensions.
func CheckCA(spec Spec, req *Request) []Finding {
	if !req.RequestsCA || strings.HasPrefix(spec.Signer, "kubernetes.io/") {
		return nil
	}
	return []Finding{{"requests-ca", Danger, fmt.Sprintf("The request asks for a CA certificate (basicConstraints CA:TRUE); if %s honours it, the holder can issue certificates of its own.", spec.Signer)}}
}

// CheckDuration flags a requested lifetime (spec.expirationSeconds) longer than
// the signer issues: the certificate will be shorter than asked. override maps
// signers to their maximum where it differs from SignerMaxDuration.
func CheckDuration(spec Spec, override map[string]time.Duration) []Finding {
	if spec.ExpirationSeconds == nil {
		return nil
	}
	maxD, ok := override[spec.Signer]
	if !ok {
		maxD, ok = SignerMaxDuration(spec.Signer)
	}
	asked := time.Duration(*spec.ExpirationSeconds) * time.Second
	if !ok || asked <= maxD {
		return nil
	}
	return []Finding{{"duration", Warning, fmt.Sprintf("Asks for %s; %s issues at most %s (kube-controller-manager --cluster-signing-duration), so the certificate will be shorter than requested.",
		duration.HumanDuration(asked), spec.Signer, duration.HumanDuration(maxD))}}
}

// CheckRequester flags a request made by someone other than the identity the
// certificate names. The kubelet signers have their own, stricter rule.
func CheckRequester(spec Spec, req *Request) []Finding {
	switch spec.Signer {
	case certificatesv1.KubeAPIServerClientKubeletSignerName, certificatesv1.KubeletServingSignerName:
		return nil
	}
	if spec.Username == "" || spec.Username == req.CommonName {
		return nil
	}
	return []Finding{{"requester-subject", Warning, fmt.Sprintf("Requested by %s for CN %s: make sure %s may obtain a certificate for that identity.", spec.Username, orNone(req.CommonName), spec.Username)}}
}

// CheckDuplicates flags other pending requests for the same signer and subject.
func CheckDuplicates(others []string) []Finding {
	if len(others) == 0 {
		return nil
	}
	noun := "request"
	if len(others) > 1 {
		noun = "requests"
	}
	// A retry storm has thousands of duplicates with names up to 253
	// characters: naming them all would make the finding megabytes long.
	shown, more := others, ""
	if len(others) > maxDuplicatesNamed {
		shown, more = others[:maxDuplicatesNamed], fmt.Sprintf(" and %d more", len(others)-maxDuplicatesNamed)
	}
	return []Finding{{"duplicate", Warning, fmt.Sprintf("%d other pending %s for the same signer and subject: %s%s. Approve at most one.", len(others), noun, strings.Join(shown, ", "), more)}}
}

// maxDuplicatesNamed is how many duplicates a finding names.
const maxDuplicatesNamed = 10

// Pending is a pending CSR as Duplicates groups it.
type Pending struct {
	Name    string
	Signer  string
	Subject string // Request.Subject
}

// Duplicates maps each pending CSR's name to the names of the other pending
// CSRs with the same signer and subject, sorted. The same subject under two
// signers (a node's client and serving certificates) is not a duplicate.
func Duplicates(pending []Pending) map[string][]string {
	groups := map[[2]string][]string{}
	for _, p := range pending {
		k := [2]string{p.Signer, p.Subject}
		groups[k] = append(groups[k], p.Name)
	}
	out := map[string][]string{}
	for _, names := range groups {
		if len(names) < 2 {
			continue
		}
		slices.Sort(names)
		for _, n := range names {
			out[n] = slices.DeleteFunc(slices.Clone(names), func(o string) bool { return o == n })
		}
	}
	return out
}

func listOrNone(ss []string) string {
	if len(ss) == 0 {
		return "empty"
	}
	return strings.Join(ss, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown user"
	}
	return s
}
