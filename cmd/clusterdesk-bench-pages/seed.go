package main

import (
	"cmp"
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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// seedLabel marks every object the benchmark creates, so a later run counts
// them and creates only what is missing.
const (
	seedLabel = "bench.clusterdesk.dev/set"
	seedValue = "pages"
)

// seedCounts is how many objects of each kind the benchmark wants.
type seedCounts struct {
	CSRs, FlowSchemas, Webhooks int
}

// seeder creates the benchmark's objects as the devcluster admin.
type seeder struct {
	k8s   kubernetes.Interface
	ext   apiextensionsclient.Interface
	log   func(format string, args ...any)
	key   *ecdsa.PrivateKey // one key for every CSR: generating thousands is slow and tells nothing
	keyMu sync.Once
	// workers is how many creates run at once (0: 16).
	workers int
	// as is a client of the same API server acting as user in groups (the
	// admin impersonating them); nil: the seeder's own client for everyone.
	as func(user string, groups ...string) (kubernetes.Interface, error)
}

// seed brings the cluster to want, creating only missing objects, and checks
// the real-world CRDs from fixtures are loaded.
func (s *seeder) seed(ctx context.Context, want seedCounts, fixtures string) error {
	if err := s.checkFixtureCRDs(ctx, fixtures); err != nil {
		return err
	}
	sel := metav1.ListOptions{LabelSelector: seedLabel + "=" + seedValue}

	csrs, err := s.k8s.CertificatesV1().CertificateSigningRequests().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("count CSRs: %w", err)
	}
	have := map[string]bool{}
	for _, c := range csrs.Items {
		have[c.Name] = true
	}
	if err := s.create(ctx, "CSRs", want.CSRs, have, csrName, s.createCSR); err != nil {
		return err
	}

	fss, err := s.k8s.FlowcontrolV1().FlowSchemas().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("count FlowSchemas: %w", err)
	}
	have = map[string]bool{}
	for _, f := range fss.Items {
		have[f.Name] = true
	}
	if err := s.create(ctx, "FlowSchemas", want.FlowSchemas, have, fsName, s.createFlowSchema); err != nil {
		return err
	}

	vwcs, err := s.k8s.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("count webhook configurations: %w", err)
	}
	have = map[string]bool{}
	for _, v := range vwcs.Items {
		have[v.Name] = true
	}
	return s.create(ctx, "ValidatingWebhookConfigurations", want.Webhooks, have, webhookName, s.createWebhook)
}

func csrName(i int) string     { return fmt.Sprintf("bench-csr-%05d", i) }
func fsName(i int) string      { return fmt.Sprintf("bench-fs-%03d", i) }
func webhookName(i int) string { return fmt.Sprintf("bench-webhook-%03d", i) }

// create makes the objects 0..n-1 that are not in have, s.workers (16) at a time.
func (s *seeder) create(ctx context.Context, what string, n int, have map[string]bool, name func(int) string, mk func(context.Context, int) error) error {
	var todo []int
	for i := range n {
		if !have[name(i)] {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		s.log("seed: %d %s already there", n, what)
		return nil
	}
	start := time.Now()
	work := make(chan int)
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for range cmp.Or(s.workers, 16) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := mk(ctx, i); err != nil && !apierrors.IsAlreadyExists(err) {
					err = fmt.Errorf("create %s: %w", name(i), err)
					failed.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	for _, i := range todo {
		if failed.Load() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := failed.Load(); err != nil {
		return *err
	}
	s.log("seed: created %d %s (%d were there) in %s", len(todo), what, n-len(todo), time.Since(start).Round(time.Millisecond))
	return nil
}

func labels() map[string]string { return map[string]string{seedLabel: seedValue} }

// createCSR makes a pending kube-apiserver-client request with its own
// subject; the key is shared.
func (s *seeder) createCSR(ctx context.Context, i int) error {
	s.keyMu.Do(func() {
		var err error
		if s.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
	})
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: fmt.Sprintf("bench-user-%05d", i), Organization: []string{fmt.Sprintf("bench-team-%02d", i%50)}},
	}, s.key)
	if err != nil {
		return err
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: csrName(i), Labels: labels()},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	_, err = s.k8s.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	return err
}

// createFlowSchema makes a FlowSchema for a user that does not exist, so it
// classifies no real request; its priority level exists (not dangling).
func (s *seeder) createFlowSchema(ctx context.Context, i int) error {
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: fsName(i), Labels: labels()},
		Spec: flowcontrolv1.FlowSchemaSpec{
			MatchingPrecedence:         int32(2000 + i*10),
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: fmt.Sprintf("bench-nobody-%03d", i)}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, Namespaces: []string{"*"},
				}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/bench/*"}}},
			}},
		},
	}
	_, err := s.k8s.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	return err
}

// createWebhook makes a configuration whose one webhook matches nothing (a
// group nobody serves, and an object label nobody sets) and is ignored on
// failure, so it never delays or refuses a request.
func (s *seeder) createWebhook(ctx context.Context, i int) error {
	none := admissionregistrationv1.SideEffectClassNone
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: webhookName(i), Labels: labels()},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    fmt.Sprintf("w%03d.bench.clusterdesk.dev", i),
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			TimeoutSeconds:          ptr.To[int32](1),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "bench-nowhere", Name: "nobody", Path: ptr.To("/validate"),
			}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"bench.invalid"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
			}},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench.clusterdesk.dev/never-set": "true"}},
		}},
	}
	_, err := s.k8s.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
	return err
}

// checkFixtureCRDs fails unless every CRD in fixtures/customresourcedefinitions
// is in the cluster: the devcluster loads them (FIXTURES=… with --seed).
func (s *seeder) checkFixtureCRDs(ctx context.Context, fixtures string) error {
	if fixtures == "" {
		return fmt.Errorf("FIXTURES is not set: run under make bench-pages, which loads ../shared/fixtures/real")
	}
	files, err := filepath.Glob(filepath.Join(fixtures, "customresourcedefinitions", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s: %v", fixtures, err)
	}
	list, err := s.ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list CRDs: %w", err)
	}
	have := map[string]bool{}
	for _, c := range list.Items {
		have[c.Name] = true
	}
	var missing []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var head struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := yaml.Unmarshal(raw, &head); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if !have[head.Metadata.Name] {
			missing = append(missing, head.Metadata.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d real-world CRDs are not in the cluster (was it seeded with FIXTURES?): %s", len(missing), strings.Join(missing, ", "))
	}
	s.log("seed: all %d real-world CRDs are loaded (%d CRDs in the cluster)", len(files), len(list.Items))
	return nil
}
