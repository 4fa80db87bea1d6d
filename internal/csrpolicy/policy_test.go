package csrpolicy

import (
	"context"
	"errors"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// kubeletServing is kubelet-csr-approver's rule set
// (github.com/postfinance/kubelet-csr-approver, README "Parameters") as one
// policy: the requester is the node the certificate names, in system:nodes;
// the usages a kubelet serving certificate has; every DNS name matches the
// provider regex (PROVIDER_REGEX) and there are at most ALLOWED_DNS_NAMES
// (1) of them; every IP is in the allowed prefixes (PROVIDER_IP_PREFIXES);
// the requested duration is at most MAX_EXPIRATION_SEC (367 days); and, the
// check the issue adds, every SAN is an address of the Node.
const kubeletServing = `
request.username == request.subject.commonName &&
request.subject.commonName.startsWith('system:node:') &&
'system:nodes' in request.groups &&
request.subject.organizations == ['system:nodes'] &&
request.usages.all(u, u in ['digital signature', 'key encipherment', 'server auth']) &&
'server auth' in request.usages &&
size(request.dnsNames) <= 1 &&
request.dnsNames.all(n, n.matches('^[a-z0-9-]+\\.k8s\\.example\\.com$')) &&
request.ipAddresses.all(ip, cidr('192.168.0.0/16').containsIP(ip) || cidr('fc00::/7').containsIP(ip)) &&
(!('expirationSeconds' in request) || request.expirationSeconds <= 367 * 24 * 3600) &&
node != null &&
request.dnsNames.all(n, n in node.addresses) &&
request.ipAddresses.all(ip, ip in node.addresses)`

func compile(t *testing.T, p Policy) *Program {
	t.Helper()
	pr, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

type input struct {
	user, cn   string
	groups     []string
	orgs       []string
	dns, ips   []string
	usages     []certificatesv1.KeyUsage
	expiration *int32
	node       *Node
}

func (i input) build() Input {
	c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1"}, Spec: certificatesv1.CertificateSigningRequestSpec{
		SignerName: certificatesv1.KubeletServingSignerName, Username: i.user, Groups: i.groups, Usages: i.usages, ExpirationSeconds: i.expiration,
	}}
	return Input{CSR: c, Request: &csr.Request{CommonName: i.cn, Organizations: i.orgs, DNSNames: i.dns, IPAddresses: i.ips,
		KeyAlgorithm: "ECDSA", KeyBits: 256}, Node: i.node}
}

func good() input {
	return input{
		user: "system:node:worker-1", cn: "system:node:worker-1",
		groups: []string{"system:nodes", "system:authenticated"}, orgs: []string{"system:nodes"},
		dns: []string{"worker-1.k8s.example.com"}, ips: []string{"192.168.4.10"},
		usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
		node:   &Node{Name: "worker-1", Addresses: []string{"192.168.4.10", "worker-1.k8s.example.com", "worker-1"}},
	}
}

// TestKubeletCSRApproverParity: the good request is approved; each rule of
// kubelet-csr-approver, broken alone, leaves the request to people.
func TestKubeletCSRApproverParity(t *testing.T) {
	pr := compile(t, Policy{Name: "kubelet-serving", Signers: []string{certificatesv1.KubeletServingSignerName},
		Expression: kubeletServing, Decision: Approve, Reason: "KubeletServingPolicy", Message: "matches the node"})
	if v := pr.Evaluate(context.Background(), good().build()); v.Err != nil || !v.Matched || v.Decision != Approve || v.Reason != "KubeletServingPolicy" {
		t.Fatalf("the good request: %+v", v)
	}
	year := int32(366 * 24 * 3600)
	tooLong := int32(368 * 24 * 3600)
	for name, change := range map[string]func(*input){
		"requester is another node": func(i *input) { i.user = "system:node:worker-2" },
		"common name is no node":    func(i *input) { i.cn, i.user = "worker-1", "worker-1" },
		"not in system:nodes":       func(i *input) { i.groups = []string{"system:authenticated"} },
		"subject organization":      func(i *input) { i.orgs = []string{"system:masters"} },
		"client auth usage":         func(i *input) { i.usages = append(i.usages, certificatesv1.UsageClientAuth) },
		"no server auth":            func(i *input) { i.usages = i.usages[:1] },
		"hostname outside the regex": func(i *input) {
			i.dns = []string{"worker-1.evil.com"}
			i.node.Addresses = append(i.node.Addresses, "worker-1.evil.com")
		},
		"two DNS names":                   func(i *input) { i.dns = append(i.dns, "x.k8s.example.com") },
		"IP outside the prefixes":         func(i *input) { i.ips = []string{"10.0.0.1"}; i.node.Addresses = append(i.node.Addresses, "10.0.0.1") },
		"expiration over 367 days":        func(i *input) { i.expiration = &tooLong },
		"IP that is not the Node's":       func(i *input) { i.ips = []string{"192.168.4.11"} },
		"DNS name that is not the Node's": func(i *input) { i.dns = []string{"worker-9.k8s.example.com"} },
		"no such Node":                    func(i *input) { i.node = nil },
	} {
		i := good()
		change(&i)
		if v := pr.Evaluate(context.Background(), i.build()); v.Err != nil || v.Matched {
			t.Errorf("%s: %+v, want no decision", name, v)
		}
	}
	i := good()
	i.expiration = &year
	if v := pr.Evaluate(context.Background(), i.build()); !v.Matched {
		t.Errorf("a year's expiration: %+v", v)
	}
	i = good()
	i.ips = []string{"fd00::10"}
	i.node.Addresses = append(i.node.Addresses, "fd00::10")
	if v := pr.Evaluate(context.Background(), i.build()); !v.Matched {
		t.Errorf("an IPv6 address in fc00::/7: %+v", v)
	}
}

func TestCompileErrorsSayWhere(t *testing.T) {
	_, err := Compile(Policy{Name: "p", Signers: []string{"example.com/x"}, Decision: Approve, Expression: "request.username ==\n  'a' &&\n  request.nosuchfunc()"})
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Field != "expression" || !strings.Contains(ce.Issues, "3:") {
		t.Errorf("want a compile error naming line 3: %v", err)
	}
	for _, p := range []Policy{
		{Name: "p", Signers: []string{"example.com/x"}, Decision: Approve, Expression: "1 + 1"},
		{Name: "p", Signers: []string{"example.com/x"}, Decision: "Maybe", Expression: "true"},
		{Name: "p", Signers: nil, Decision: Approve, Expression: "true"},
		{Name: "p", Signers: []string{"no-slash"}, Decision: Approve, Expression: "true"},
		{Name: "p", Signers: []string{"example.com/x"}, Decision: Approve, Expression: " "},
		{Name: "p", Signers: []string{"example.com/x"}, Decision: Approve, Expression: "request.dnsNames.all(n, n.matches('['))"},
	} {
		if _, err := Compile(p); !errors.As(err, &ce) {
			t.Errorf("%+v compiled: %v", p, err)
		}
	}
	// A dyn expression that is not a bool at run time is an error, not a verdict.
	pr := compile(t, Policy{Name: "p", Signers: []string{"example.com/x"}, Decision: Approve, Expression: "request.username"})
	if v := pr.Evaluate(context.Background(), good().build()); v.Err == nil || v.Matched {
		t.Errorf("a string result: %+v", v)
	}
}

func TestAppliesToAndUndecodable(t *testing.T) {
	p := Policy{Name: "p", Signers: []string{"example.com/*", certificatesv1.KubeletServingSignerName}, Decision: Deny, Expression: "true"}
	for signer, want := range map[string]bool{"example.com/a": true, "example.com/b/c": true, "example.org/a": false,
		certificatesv1.KubeletServingSignerName: true, certificatesv1.KubeAPIServerClientSignerName: false} {
		if p.AppliesTo(signer) != want {
			t.Errorf("AppliesTo(%s) = %v", signer, !want)
		}
	}
	in := good().build()
	in.Request = nil
	if v := compile(t, p).Evaluate(context.Background(), in); !errors.Is(v.Err, ErrUndecodable) || v.Matched {
		t.Errorf("undecodable: %+v", v)
	}
	if NodeName(good().build().Request) != "worker-1" || NodeName(&csr.Request{CommonName: "jane"}) != "" {
		t.Error("NodeName")
	}
}

func TestFromObject(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"signerNames": []any{"example.com/*"}, "expression": "true", "decision": "Deny", "reason": "No", "message": "m"},
	}}
	p, err := FromObject(u)
	if err != nil || p.Name != "p" || p.Decision != Deny || p.Reason != "No" || p.Message != "m" || len(p.Signers) != 1 || p.Expression != "true" {
		t.Fatalf("%+v %v", p, err)
	}
	u.Object["spec"].(map[string]any)["decision"] = 3
	if _, err := FromObject(u); err == nil {
		t.Error("a number as the decision was read")
	}
}
