package seed

import (
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/apis/certificates"
)

func TestDemoCSRRequestsAreRealAndSigned(t *testing.T) {
	for _, d := range demoCSRs {
		t.Run(d.name, func(t *testing.T) {
			csr := parse(t, d)
			if err := csr.CheckSignature(); err != nil {
				t.Errorf("signature: %v", err)
			}
			if csr.Subject.CommonName != d.subject.CommonName {
				t.Errorf("CN = %q, want %q", csr.Subject.CommonName, d.subject.CommonName)
			}
			switch d.key {
			case rsa2048:
				if _, ok := csr.PublicKey.(*rsa.PublicKey); !ok {
					t.Errorf("public key %T, want RSA", csr.PublicKey)
				}
			case ed25519Key:
				if _, ok := csr.PublicKey.(ed25519.PublicKey); !ok {
					t.Errorf("public key %T, want Ed25519", csr.PublicKey)
				}
			}
		})
	}
}

// The kubelet signers refuse CSRs that don't fit their rules; the demo
// relies on exactly one of them failing.
func TestDemoKubeletCSRsFitTheirSigner(t *testing.T) {
	for _, d := range demoCSRs {
		usages := sets.NewString()
		for _, u := range d.usages {
			usages.Insert(string(u))
		}
		var err error
		switch d.signer {
		case certv1.KubeAPIServerClientKubeletSignerName:
			err = certificates.ValidateKubeletClientCSR(parse(t, d), usages)
		case certv1.KubeletServingSignerName:
			err = certificates.ValidateKubeletServingCSR(parse(t, d), usages)
		default:
			continue
		}
		wantFail := strings.HasSuffix(d.name, "-misfit")
		if (err != nil) != wantFail {
			t.Errorf("%s: signer check error = %v, want failure %v", d.name, err, wantFail)
		}
	}
}

func TestDemoCSRsCoverSignersStatesAndRequesters(t *testing.T) {
	names := map[string]bool{}
	signers := map[string]int{}
	requesters := map[string]bool{}
	decisions := map[decision]int{}
	for _, d := range demoCSRs {
		if names[d.name] {
			t.Errorf("duplicate name %s", d.name)
		}
		names[d.name] = true
		signers[d.signer]++
		requesters[d.requester] = true
		decisions[d.decision]++
		if d.decision != pending && d.decidedBy == "" {
			t.Errorf("%s: decision without decidedBy", d.name)
		}
	}
	if len(demoCSRs) < 12 {
		t.Errorf("%d demo CSRs, want at least 12", len(demoCSRs))
	}
	for _, s := range []string{certv1.KubeAPIServerClientSignerName, certv1.KubeAPIServerClientKubeletSignerName, certv1.KubeletServingSignerName, customSigner} {
		if signers[s] == 0 {
			t.Errorf("no demo CSR for signer %s", s)
		}
	}
	for _, r := range []string{byAdmin, byApprover, byNode("worker-1")} {
		if !requesters[r] {
			t.Errorf("no demo CSR requested by %s", r)
		}
	}
	if decisions[deny] != 1 || decisions[approve] == 0 || decisions[pending] == 0 {
		t.Errorf("decisions = %v, want pending, approved and exactly one denied", decisions)
	}
}

func TestDemoManifestsDecodeToKnownKinds(t *testing.T) {
	items, err := demoItems()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, it := range items {
		if _, _, err := resourceFor(it.obj); err != nil {
			t.Errorf("%s: %v", it.source, err)
		}
		counts[it.obj.GetKind()]++
		if it.obj.GetKind() == "ValidatingWebhookConfiguration" {
			assertCannotBlock(t, it)
		}
		if it.obj.GetKind() == "ValidatingAdmissionPolicyBinding" && it.source != guardSource {
			assertBindsNothing(t, it)
		}
	}
	want := map[string]int{"CustomResourceDefinition": 5, "CSRApprovalPolicy": 2, "CSIDriver": 4, "ValidatingWebhookConfiguration": 3, "FlowSchema": 3, "PriorityLevelConfiguration": 1,
		"ValidatingAdmissionPolicy": 3, "ValidatingAdmissionPolicyBinding": 3}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%d %s objects, want %d", counts[k], k, n)
		}
	}
}

// guardSource is the one binding that binds for real: deploy/base's guard of
// the CSRApprovalPolicies (only who may approve a signer writes a policy
// naming it), seeded so that the tests and `make run` have it.
const guardSource = "demo/csrapprovalpolicies-guard.yaml"

// assertBindsNothing checks that a demo policy binding only matches objects
// carrying a label no object has, so that no request gets its warnings or denials.
func assertBindsNothing(t *testing.T, it item) {
	t.Helper()
	labels, _, _ := unstructured.NestedStringMap(it.obj.Object, "spec", "matchResources", "objectSelector", "matchLabels")
	if _, ok := labels["clusterdesk.dev/never-set"]; !ok {
		t.Errorf("binding %s could affect requests", it.obj.GetName())
	}
}

// assertCannotBlock checks that each demo webhook either ignores failures or
// only matches objects carrying a label no object has.
func assertCannotBlock(t *testing.T, it item) {
	t.Helper()
	webhooks, _, _ := unstructured.NestedSlice(it.obj.Object, "webhooks")
	for _, w := range webhooks {
		hook := w.(map[string]any)
		if hook["failurePolicy"] == "Ignore" {
			continue
		}
		sel, _ := hook["objectSelector"].(map[string]any)
		labels, _ := sel["matchLabels"].(map[string]any)
		if _, ok := labels["clusterdesk.dev/never-set"]; !ok {
			t.Errorf("%s webhook %v could reject requests", it.obj.GetName(), hook["name"])
		}
	}
}

func parse(t *testing.T, d demoCSR) *x509.CertificateRequest {
	t.Helper()
	data, err := d.request()
	if err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" || len(rest) != 0 {
		t.Fatalf("%s: not a single CERTIFICATE REQUEST PEM block", d.name)
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return csr
}
