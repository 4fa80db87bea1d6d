package seed

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

//go:embed demo/*.yaml
var demoFS embed.FS

// Clients are the identities demo seeding acts as.
type Clients struct {
	Admin    *rest.Config
	Approver *rest.Config
}

// Demo creates the demo CRDs, CSIDrivers, webhook configurations, flow
// schemas and priority level from demo/*.yaml, then the demo CSRs.
func Demo(ctx context.Context, c Clients) (Result, error) {
	var res Result
	items, err := demoItems()
	if err != nil {
		return res, err
	}
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return res, err
	}
	createAll(ctx, dyn, items, &res)
	if err := seedCSRs(ctx, c, &res); err != nil {
		return res, err
	}
	return res, nil
}

func demoItems() ([]item, error) {
	files, err := fs.Glob(demoFS, "demo/*.yaml")
	if err != nil {
		return nil, err
	}
	var items []item
	for _, name := range files {
		data, err := demoFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		objs, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, obj := range objs {
			items = append(items, item{source: name, obj: obj})
		}
	}
	return items, nil
}

// seedCSRs creates each demo CSR as its requester and, if the CSR is new or
// still undecided, approves or denies it. An approved CSR for a kubernetes.io
// signer is then issued by the controller manager's signer.
func seedCSRs(ctx context.Context, c Clients, res *Result) error {
	clientsets := map[string]kubernetes.Interface{}
	clientFor := func(user string) (kubernetes.Interface, error) {
		if cs, ok := clientsets[user]; ok {
			return cs, nil
		}
		var cfg *rest.Config
		switch {
		case user == byAdmin:
			cfg = c.Admin
		case user == byApprover:
			cfg = c.Approver
		case strings.HasPrefix(user, "system:node:"):
			cfg = rest.CopyConfig(c.Admin)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:nodes", "system:authenticated"}}
		default:
			return nil, fmt.Errorf("no client for requester %q", user)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		clientsets[user] = cs
		return cs, nil
	}
	admin, err := clientFor(byAdmin)
	if err != nil {
		return err
	}

	for _, d := range demoCSRs {
		requester, err := clientFor(d.requester)
		if err != nil {
			return err
		}
		csr, err := createCSR(ctx, requester, d)
		if apierrors.IsAlreadyExists(err) {
			res.Existing++
			csr, err = admin.CertificatesV1().CertificateSigningRequests().Get(ctx, d.name, metav1.GetOptions{})
		} else if err == nil {
			res.Created++
		}
		if err != nil {
			res.warn("CSR %s: %v", d.name, err)
			continue
		}
		if d.decision == pending || decided(csr) {
			continue
		}
		decider, err := clientFor(d.decidedBy)
		if err != nil {
			return err
		}
		if err := decide(ctx, decider, csr, d); err != nil {
			res.warn("CSR %s: %v", d.name, err)
		}
	}
	return nil
}

func createCSR(ctx context.Context, cs kubernetes.Interface, d demoCSR) (*certv1.CertificateSigningRequest, error) {
	request, err := d.request()
	if err != nil {
		return nil, err
	}
	csr := &certv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: d.name, Labels: map[string]string{"clusterdesk.dev/demo": "true"}},
		Spec: certv1.CertificateSigningRequestSpec{
			Request:    request,
			SignerName: d.signer,
			Usages:     d.usages,
		},
	}
	if d.expirationSeconds > 0 {
		csr.Spec.ExpirationSeconds = &d.expirationSeconds
	}
	return cs.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{FieldManager: fieldManager})
}

func decided(csr *certv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certv1.CertificateApproved || c.Type == certv1.CertificateDenied {
			return true
		}
	}
	return false
}

// decide adds the Approved or Denied condition through the approval
// subresource, which is what `kubectl certificate approve|deny` does.
func decide(ctx context.Context, cs kubernetes.Interface, csr *certv1.CertificateSigningRequest, d demoCSR) error {
	condition := certv1.CertificateApproved
	if d.decision == deny {
		condition = certv1.CertificateDenied
	}
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type:           condition,
		Status:         corev1.ConditionTrue,
		Reason:         d.reason,
		Message:        d.message,
		LastUpdateTime: metav1.Now(),
	})
	_, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{FieldManager: fieldManager})
	return err
}
