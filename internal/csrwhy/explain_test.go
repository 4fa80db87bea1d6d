package csrwhy

import (
	"context"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

const serving = "kubernetes.io/kubelet-serving"

// ownAddresses is the demo seed's kubelet-serving policy
// (devcluster/internal/seed/demo/csrapprovalpolicies-demo.yaml).
const ownAddresses = `request.username == request.subject.commonName &&
request.subject.commonName.startsWith('system:node:') &&
'system:nodes' in request.groups &&
request.usages.all(u, u in ['digital signature', 'key encipherment', 'server auth']) &&
node != null &&
request.dnsNames.all(n, n in node.addresses) &&
request.ipAddresses.all(ip, ip in node.addresses)`

var now = time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)

func entry(t *testing.T, p csrpolicy.Policy) csrpolicy.Entry {
	t.Helper()
	if p.Decision == "" {
		p.Decision = csrpolicy.Approve
	}
	if p.Reason == "" {
		p.Reason = "R"
	}
	pr, err := csrpolicy.Compile(p)
	return csrpolicy.Entry{Policy: p, Program: pr, Err: err}
}

func kubelet(name, node string, created time.Time, dns ...string) (*certificatesv1.CertificateSigningRequest, *csr.Request) {
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: serving, Username: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"},
			Usages: []certificatesv1.KeyUsage{"digital signature", "server auth"},
		},
	}
	r := &csr.Request{Subject: "CN=system:node:" + node + ",O=system:nodes", CommonName: "system:node:" + node,
		Organizations: []string{"system:nodes"}, DNSNames: dns, KeyAlgorithm: "ECDSA", KeyBits: 256}
	return c, r
}

// leading is an approver that holds its Lease now.
var leading = Approver{Installed: true, Lease: "clusterdesk/clusterdesk-approver", Holder: "a-1",
	RenewTime: now.Add(-3 * time.Second), LeaseDuration: 15 * time.Second}

func explain(in Input) Reason {
	in.Now, in.Detail = now, true
	return Explain(context.Background(), in)
}

func want(t *testing.T, r Reason, code Code, words ...string) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("code %s (%q), want %s", r.Code, r.Message, code)
	}
	for _, w := range words {
		if !strings.Contains(r.Message, w) {
			t.Errorf("message %q lacks %q", r.Message, w)
		}
	}
}

func TestEveryReason(t *testing.T) {
	pol := entry(t, csrpolicy.Policy{Name: "own-addresses", Signers: []string{serving}, Expression: ownAddresses})
	node := NodeState{Known: true, Node: &csrpolicy.Node{Name: "n1", Addresses: []string{"n1.example", "10.0.0.1"}}}
	c, r := kubelet("csr-a", "n1", now.Add(-time.Minute), "n1.example")
	base := Input{CSR: c, Request: r, Policies: []csrpolicy.Entry{pol}, Node: node, Approver: leading}

	t.Run("NoPolicy", func(t *testing.T) {
		in := base
		in.Policies = []csrpolicy.Entry{entry(t, csrpolicy.Policy{Name: "other", Signers: []string{"example.com/x"}, Expression: "true"})}
		want(t, explain(in), NoPolicy, "no policy names the signer "+serving)
	})
	t.Run("NotForRequester", func(t *testing.T) {
		in := base
		p := pol.Policy
		p.Name, p.Requesters = "ops-only", &csrpolicy.Requesters{Groups: []string{"ops"}, ServiceAccounts: []string{"kube-system/x"}}
		in.Policies = []csrpolicy.Entry{entry(t, p)}
		want(t, explain(in), NotForRequester, "covers the requester system:node:n1", "system:nodes", "ops-only", "groups ops", "service accounts kube-system/x")
	})
	t.Run("Superseded", func(t *testing.T) {
		in := base
		older, _ := kubelet("csr-old", "n1", now.Add(-time.Hour), "n1.example")
		d := NewDuplicates(2)
		d.Add(older, r)
		d.Add(c, r)
		in.CSR, in.Newer = older, d.Newer(older, r)
		want(t, explain(in), Superseded, "newer request csr-a", "system:node:n1")
		if n := d.Newer(c, r); n != "" {
			t.Errorf("the newest is superseded by %q", n)
		}
	})
	t.Run("PolicyError", func(t *testing.T) {
		in := base
		in.Policies = append(in.Policies, entry(t, csrpolicy.Policy{Name: "broken", Signers: []string{serving}, Expression: "request.nope("}))
		want(t, explain(in), PolicyError, "the policy broken cannot run")
		in = base
		in.Request = nil
		want(t, explain(in), PolicyError, "does not decode")
	})
	t.Run("Conflict", func(t *testing.T) {
		in := base
		in.Policies = append(in.Policies, entry(t, csrpolicy.Policy{Name: "zz-deny", Signers: []string{serving}, Expression: "true", Decision: csrpolicy.Deny}))
		want(t, explain(in), Conflict, "own-addresses would approve it, zz-deny would deny it")
	})
	t.Run("NodeMissing", func(t *testing.T) {
		in := base
		in.Node = NodeState{Known: true}
		want(t, explain(in), NodeMissing, "its Node n1 does not exist")
		in.Node = NodeState{} // the queue: unknown, so the clause says it
		want(t, explain(in), ClauseFalse, "clause 5 of 7", "`node != null`", "node = null")
	})
	t.Run("ClauseFalse", func(t *testing.T) {
		in := base
		in.CSR, in.Request = kubelet("csr-b", "n1", now, "n1.example", "evil.example")
		want(t, explain(in), ClauseFalse, "the policy own-addresses does not match it", "clause 6 of 7",
			"`request.dnsNames.all(n, n in node.addresses)` is false",
			`request.dnsNames = ["n1.example", "evil.example"]`, `node.addresses = ["n1.example", "10.0.0.1"]`)
		// A request of another node's name: the first clause, with both values.
		c2, r2 := kubelet("csr-c", "n1", now)
		c2.Spec.Username = "system:node:n2"
		in.CSR, in.Request = c2, r2
		want(t, explain(in), ClauseFalse, "clause 1 of 7", `request.username = "system:node:n2"`, `request.subject.commonName = "system:node:n1"`)
	})
	t.Run("ClauseFalseOr", func(t *testing.T) {
		in := base
		in.Policies = []csrpolicy.Entry{entry(t, csrpolicy.Policy{Name: "either", Signers: []string{serving},
			Expression: "request.keyBits >= 4096 || request.requestsCA"})}
		want(t, explain(in), ClauseFalse, "none of its 2 alternatives holds", "`request.keyBits >= 4096`", "request.keyBits = 256")
	})
	t.Run("ClauseFalseOneClause", func(t *testing.T) {
		in := base
		in.Policies = []csrpolicy.Entry{entry(t, csrpolicy.Policy{Name: "long", Signers: []string{serving},
			Expression: "request.dnsNames.all(n, n.endsWith('.internal'))"})}
		want(t, explain(in), ClauseFalse, "its expression", `request.dnsNames = ["n1.example"]`)
	})
	t.Run("NotInstalled", func(t *testing.T) {
		in := base
		in.Approver = Approver{Lease: "clusterdesk/clusterdesk-approver"}
		want(t, explain(in), NotInstalled, "own-addresses would approve it", "no approver is installed", "clusterdesk/clusterdesk-approver")
	})
	t.Run("NoLeader", func(t *testing.T) {
		in := base
		in.Approver.RenewTime = now.Add(-2 * time.Minute)
		want(t, explain(in), NoLeader, "held by a-1, was last renewed 2m0s ago, beyond its 15s")
		in.Approver.Holder = ""
		want(t, explain(in), NoLeader, "has no holder")
	})
	t.Run("Forbidden", func(t *testing.T) {
		in := base
		in.Approver.Refused = map[string]bool{serving: true}
		want(t, explain(in), Forbidden, "refused the approver `approve` on the signer "+serving, "403")
	})
	t.Run("RateLimited", func(t *testing.T) {
		in := base
		in.RateLimit = &RateHold{Policy: "own-addresses", Approved: 3, Max: 3, Period: time.Hour}
		want(t, explain(in), RateLimited, "3 of 3 approvals for system:node:n1 within 1h")
	})
	t.Run("DryRun", func(t *testing.T) {
		in := base
		in.Approver.DryRun = true
		want(t, explain(in), DryRun, "dry run")
	})
	t.Run("Deciding", func(t *testing.T) {
		want(t, explain(base), Deciding, "the approver (a-1) is deciding it")
	})
	t.Run("CodeOnly", func(t *testing.T) {
		in := base
		in.CSR, in.Request = kubelet("csr-b", "n1", now, "evil.example")
		in.Now = now
		r := Explain(context.Background(), in)
		if r.Code != ClauseFalse || r.Message != "" || r.Policy != "own-addresses" {
			t.Errorf("without Detail: %+v", r)
		}
	})
}

// TestMemoizedVerdicts: given verdicts, the engine does not evaluate the
// policies again (the queue's memo decides).
func TestMemoizedVerdicts(t *testing.T) {
	pol := entry(t, csrpolicy.Policy{Name: "never", Signers: []string{serving}, Expression: "false"})
	c, r := kubelet("csr-a", "n1", now)
	in := Input{CSR: c, Request: r, Policies: []csrpolicy.Entry{pol}, Approver: leading, Evaluated: true,
		Verdicts: []csrpolicy.Verdict{{Policy: "never", Matched: true, Decision: csrpolicy.Approve}}}
	want(t, explain(in), Deciding, "never would approve")
}

func TestCodesKnown(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Codes {
		if !Known(string(c)) || seen[c.Short()] || c.Short() == string(c) {
			t.Errorf("code %s: known %v, short %q", c, Known(string(c)), c.Short())
		}
		seen[c.Short()] = true
	}
	if Known("Other") {
		t.Error("an unknown code is known")
	}
}

// TestValuesBounded: a request with 200 SANs shows a few of them, and a
// long clause is clipped.
func TestValuesBounded(t *testing.T) {
	dns := make([]string, 200)
	for i := range dns {
		dns[i] = strings.Repeat("x", 60) + ".example"
	}
	pol := entry(t, csrpolicy.Policy{Name: "p", Signers: []string{serving}, Expression: ownAddresses})
	c, r := kubelet("csr-a", "n1", now, dns...)
	in := Input{CSR: c, Request: r, Policies: []csrpolicy.Entry{pol}, Approver: leading,
		Node: NodeState{Known: true, Node: &csrpolicy.Node{Name: "n1"}}}
	got := explain(in)
	want(t, got, ClauseFalse, "request.dnsNames = [")
	if len(got.Message) > 600 {
		t.Errorf("message of %d bytes: %s", len(got.Message), got.Message)
	}
}
