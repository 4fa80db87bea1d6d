package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// shapeCounts are the worst realistic shapes the scale cluster holds (issue 15,
// point 7): a kubelet retry storm, tens of thousands of decided CSRs,
// thousands of CRDs with real schemas, CRDs with many versions, 253-character
// names, 200-SAN requests and 256 KiB annotations.
type shapeCounts struct {
	CSRs    int // in all, the storm and the odd ones included
	Decided int // regular requests approved or denied (for a signer no controller serves)
	Storm   int // pending kubelet-serving requests of one node, with 253-character names
	// RequesterStorm: pending requests of one service account for one signer,
	// every subject different (automation gone wrong); on top of CSRs.
	RequesterStorm  int
	SANs            int // pending requests with 200 DNS names each
	CRDs            int // real schemas from the fixtures under generated group names, the largest first
	ManyVersionCRDs int // CRDs with manyVersions versions
}

const (
	shapesValue = "shapes" // seedLabel's value on the shapes' objects
	stormNode   = "storm-node"
	// runawayRequester asks for the requester storm's requests (the seeder
	// impersonates it).
	runawayRequester = "system:serviceaccount:bench:runaway-issuer"
	// noSigner is a signer no controller serves: an approved request stays
	// approved, and 45,000 approvals cost the controller manager nothing.
	noSigner      = "example.com/clusterdesk-bench"
	manyVersions  = 30
	sansPerCSR    = 200
	annotationLen = 250 << 10 // the API server allows 256 KiB of annotations per object
	shapesGroup   = "shapes.bench.clusterdesk.dev"
	annotationKey = "bench.clusterdesk.dev/padding"
)

// longName is prefix + DNS labels of x + suffix, n characters long (253: the
// longest object name). prefix ends with "." and suffix is "" or starts with
// ".", so the name is a valid DNS subdomain wherever one is asked for.
func longName(prefix, suffix string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	rest := n - len(prefix) - len(suffix)
	for rest > 63 {
		b.WriteString(strings.Repeat("x", 62) + ".")
		rest -= 63
	}
	b.WriteString(strings.Repeat("x", max(rest, 1)))
	return b.String() + suffix
}

func shapeCSRName(i int) string { return fmt.Sprintf("shape-csr-%05d", i) }
func stormCSRName(i int) string { return longName(fmt.Sprintf("storm-%05d.", i), "", 253) }
func sanCSRName(i int) string   { return fmt.Sprintf("sans-%03d", i) }

const annotatedCSR = "annotated-csr"

// shapeCSRs: how the CSR count splits.
// The requester storm comes on top of CSRs (added after the others were
// first seeded, it keeps a seeded cluster's regular requests as they are).
func (c shapeCounts) regular() int { return max(c.CSRs-c.Storm-c.SANs-1, 0) }

func requesterStormCSRName(i int) string { return fmt.Sprintf("runaway-%05d", i) }

// seedShapeCSRs creates the shapes' CSRs that are missing.
func seedShapeCSRs(ctx context.Context, s *seeder, c shapeCounts) error {
	have := map[string]bool{}
	opts := metav1.ListOptions{LabelSelector: seedLabel + "=" + shapesValue, Limit: 5000}
	for {
		l, err := s.k8s.CertificatesV1().CertificateSigningRequests().List(ctx, opts)
		if err != nil {
			return fmt.Errorf("count shape CSRs: %w", err)
		}
		for _, it := range l.Items {
			have[it.Name] = true
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			break
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	csrs := s.k8s.CertificatesV1().CertificateSigningRequests()
	decided := min(c.Decided, c.regular())
	err = s.create(ctx, "regular CSRs", c.regular(), have, shapeCSRName, func(ctx context.Context, i int) error {
		signer := certificatesv1.KubeAPIServerClientSignerName
		if i < decided {
			signer = noSigner
		}
		obj, err := newCSR(key, shapeCSRName(i), signer, pkix.Name{CommonName: fmt.Sprintf("bench-user-%05d", i), Organization: []string{fmt.Sprintf("bench-team-%02d", i%50)}}, nil)
		if err != nil {
			return err
		}
		created, err := csrs.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil || i >= decided {
			return err
		}
		// Two in three approved, one denied: the decided tabs hold both.
		cond := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "BenchApproved"}
		if i%3 == 0 {
			cond.Type, cond.Reason = certificatesv1.CertificateDenied, "BenchDenied"
			// The controller manager's csrcleaner deletes a denied request an
			// hour after its condition's lastUpdateTime, which the API server
			// sets only when the client leaves it empty: a decision dated a
			// year ahead keeps the 15,000 denied requests for the next run
			// (approved ones for a signer nobody serves carry no certificate,
			// and the cleaner keeps those anyway). See upstream
			// pkg/controller/certificates/cleaner/cleaner.go,
			// isDeniedPastDeadline / isOlderThan.
			cond.LastUpdateTime = metav1.NewTime(time.Now().AddDate(1, 0, 0))
		}
		created.Status.Conditions = append(created.Status.Conditions, cond)
		_, err = csrs.UpdateApproval(ctx, created.Name, created, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	// The storm: a kubelet that cannot get its serving certificate asks again
	// and again; every request has the same subject. kubelet-serving requests
	// are not approved automatically, so the storm stays pending.
	err = s.create(ctx, "storm CSRs", c.Storm, have, stormCSRName, func(ctx context.Context, i int) error {
		obj, err := newCSR(key, stormCSRName(i), certificatesv1.KubeletServingSignerName,
			pkix.Name{CommonName: "system:node:" + stormNode, Organization: []string{"system:nodes"}}, []string{stormNode})
		if err != nil {
			return err
		}
		obj.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
		_, err = csrs.Create(ctx, obj, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	// The requester storm: a controller gone wrong asks the API server's
	// client signer for a new name on every retry. The seeder's admin
	// impersonates it (as a superuser: only the requester's name matters).
	runaway := s.k8s
	if s.as != nil {
		if runaway, err = s.as(runawayRequester, "system:masters", "system:serviceaccounts"); err != nil {
			return err
		}
	}
	err = s.create(ctx, "requester-storm CSRs", c.RequesterStorm, have, requesterStormCSRName, func(ctx context.Context, i int) error {
		obj, err := newCSR(key, requesterStormCSRName(i), noSigner, pkix.Name{CommonName: fmt.Sprintf("runaway-%05d.bench.example.com", i)}, nil)
		if err != nil {
			return err
		}
		_, err = runaway.CertificatesV1().CertificateSigningRequests().Create(ctx, obj, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	err = s.create(ctx, "200-SAN CSRs", c.SANs, have, sanCSRName, func(ctx context.Context, i int) error {
		var dns []string
		for j := range sansPerCSR {
			dns = append(dns, fmt.Sprintf("host-%03d.sans-%03d.bench.example.com", j, i))
		}
		obj, err := newCSR(key, sanCSRName(i), noSigner, pkix.Name{CommonName: fmt.Sprintf("sans-%03d.bench.example.com", i)}, dns)
		if err != nil {
			return err
		}
		_, err = csrs.Create(ctx, obj, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	return s.create(ctx, "annotated CSR", 1, have, func(int) string { return annotatedCSR }, func(ctx context.Context, _ int) error {
		obj, err := newCSR(key, annotatedCSR, noSigner, pkix.Name{CommonName: "annotated"}, nil)
		if err != nil {
			return err
		}
		obj.Annotations = map[string]string{annotationKey: strings.Repeat("a", annotationLen)}
		_, err = csrs.Create(ctx, obj, metav1.CreateOptions{})
		return err
	})
}

// newCSR is a client-auth request for subject with dns SANs, labelled as a shape.
func newCSR(key *ecdsa.PrivateKey, name, signer string, subject pkix.Name, dns []string) (*certificatesv1.CertificateSigningRequest, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns}, key)
	if err != nil {
		return nil, err
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{seedLabel: shapesValue}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: signer,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, nil
}

// fixtureCRDs reads the real-world CRDs, largest first.
func fixtureCRDs(fixtures string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(fixtures, "customresourcedefinitions", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s (set FIXTURES): %v", fixtures, err)
	}
	type sized struct {
		crd  *apiextensionsv1.CustomResourceDefinition
		size int
	}
	var all []sized
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, sized{&crd, len(raw)})
	}
	slices.SortStableFunc(all, func(a, b sized) int { return b.size - a.size })
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(all))
	for i, s := range all {
		out[i] = s.crd
	}
	return out, nil
}

// crdShapes names and builds the generated CRDs: the i-th is the fixture
// i mod n (the largest first) under group g<i>.shapes…; the second has a
// 253-character name, the third a 256 KiB annotation.
type crdShapes struct {
	fixtures []*apiextensionsv1.CustomResourceDefinition
}

func (cs crdShapes) group(i int) string {
	if i == 1 {
		// plural + "." + group is the CRD's name: 253 characters.
		plural := cs.fixtures[i%len(cs.fixtures)].Spec.Names.Plural
		return longName("g0001.", "."+shapesGroup, 253-len(plural)-1)
	}
	return fmt.Sprintf("g%04d.%s", i, shapesGroup)
}

func (cs crdShapes) name(i int) string {
	return cs.fixtures[i%len(cs.fixtures)].Spec.Names.Plural + "." + cs.group(i)
}

func (cs crdShapes) build(i int) *apiextensionsv1.CustomResourceDefinition {
	base := cs.fixtures[i%len(cs.fixtures)]
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: cs.name(i), Labels: map[string]string{seedLabel: shapesValue}},
		Spec:       *base.Spec.DeepCopy(),
	}
	crd.Spec.Group = cs.group(i)
	// A conversion webhook would be called by nobody here, but its Service
	// may not exist: None keeps the CRD servable.
	crd.Spec.Conversion = nil
	if i == 2 {
		crd.Annotations = map[string]string{annotationKey: strings.Repeat("a", annotationLen)}
	}
	return crd
}

func manyVersionName(i int) string {
	return fmt.Sprintf("widgets.mv%02d.%s", i, shapesGroup)
}

// manyVersionCRD has manyVersions served versions of one medium-sized real
// schema (a version per release of an operator that never drops one).
func manyVersionCRD(fixtures []*apiextensionsv1.CustomResourceDefinition, i int) *apiextensionsv1.CustomResourceDefinition {
	// The median fixture: 30 copies of the largest would pass etcd's 1.5 MiB.
	base := fixtures[len(fixtures)/2]
	v0 := base.Spec.Versions[0]
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: manyVersionName(i), Labels: map[string]string{seedLabel: shapesValue}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: fmt.Sprintf("mv%02d.%s", i, shapesGroup),
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.ClusterScoped,
		},
	}
	for v := 1; v <= manyVersions; v++ {
		ver := *v0.DeepCopy()
		ver.Name = fmt.Sprintf("v%d", v)
		ver.Served, ver.Storage = true, v == manyVersions
		ver.Deprecated, ver.DeprecationWarning = v < manyVersions-2, nil
		crd.Spec.Versions = append(crd.Spec.Versions, ver)
	}
	return crd
}

// seedShapeCRDs creates the shapes' CRDs that are missing, 4 at a time (each
// one makes the API server build handlers and OpenAPI).
func seedShapeCRDs(ctx context.Context, k8s kubernetes.Interface, ext apiextensionsclient.Interface, fixtures string, c shapeCounts, logf func(string, ...any)) (crdShapes, error) {
	fx, err := fixtureCRDs(fixtures)
	if err != nil {
		return crdShapes{}, err
	}
	cs := crdShapes{fixtures: fx}
	list, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{LabelSelector: seedLabel + "=" + shapesValue})
	if err != nil {
		return cs, fmt.Errorf("count shape CRDs: %w", err)
	}
	have := map[string]bool{}
	for _, it := range list.Items {
		have[it.Name] = true
	}
	s := &seeder{k8s: k8s, ext: ext, log: logf, workers: 4}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	if err := s.create(ctx, "CRDs", c.CRDs, have, cs.name, func(ctx context.Context, i int) error {
		_, err := crds.Create(ctx, cs.build(i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return cs, err
	}
	return cs, s.create(ctx, "many-version CRDs", c.ManyVersionCRDs, have, manyVersionName, func(ctx context.Context, i int) error {
		_, err := crds.Create(ctx, manyVersionCRD(fx, i), metav1.CreateOptions{})
		return err
	})
}
