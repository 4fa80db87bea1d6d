package issue

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// fakeWriter serves one live CSR and records writes: a one-function fake, the
// API server's part is tested against the devcluster (handlers).
type fakeWriter struct {
	live     *certificatesv1.CertificateSigningRequest
	writeErr error
	written  []*certificatesv1.CertificateSigningRequest
}

func (f *fakeWriter) ReadCSR(context.Context, string) (*certificatesv1.CertificateSigningRequest, error) {
	return f.live.DeepCopy(), nil
}

func (f *fakeWriter) WriteCSRCertificate(_ context.Context, c *certificatesv1.CertificateSigningRequest) (*certificatesv1.CertificateSigningRequest, []string, error) {
	if f.writeErr != nil {
		return nil, nil, f.writeErr
	}
	f.written = append(f.written, c)
	return c, []string{"a warning"}, nil
}

type recorder struct{ outcomes []Outcome }

func (r *recorder) Issued(_ context.Context, o Outcome) { r.outcomes = append(r.outcomes, o) }

func TestUpload(t *testing.T) {
	req, key := request(t, certificatesv1.UsageClientAuth)
	req.Name, req.UID, req.ResourceVersion = "app", "11111111-1111-1111-1111-111111111111", "42"
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}
	req.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved}
	ca := testfixtures.NewCA(t, "root")
	leaf := ca.Issue(t, &key.PublicKey, x509.Certificate{Subject: pkix.Name{CommonName: "app"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	ref := Ref{Name: "app", UID: req.UID, ResourceVersion: "42"}
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "app", errors.New("the object has been modified"))

	cases := []struct {
		name     string
		readOnly bool
		live     func(c *certificatesv1.CertificateSigningRequest)
		ref      Ref
		chain    []byte
		writeErr error
		want     string // "" for written
	}{
		{name: "written", ref: ref, chain: leaf},
		{name: "read-only", readOnly: true, ref: ref, chain: leaf, want: "read-only"},
		{name: "no version", ref: Ref{Name: "app", UID: req.UID}, chain: leaf, want: "which version"},
		{name: "garbage", ref: ref, chain: []byte("nope"), want: "no PEM CERTIFICATE block"},
		{name: "replaced", ref: ref, chain: leaf, live: func(c *certificatesv1.CertificateSigningRequest) { c.UID = "22222222-2222-2222-2222-222222222222" }, want: "was replaced"},
		{name: "changed", ref: ref, chain: leaf, live: func(c *certificatesv1.CertificateSigningRequest) { c.ResourceVersion = "43" }, want: "changed since you looked"},
		{name: "kubernetes signer", ref: ref, chain: leaf, live: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.SignerName = "kubernetes.io/kube-apiserver-client"
		}, want: "built into Kubernetes"},
		{name: "issued already", ref: ref, chain: leaf, live: func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = leaf }, want: "already has a certificate"},
		{name: "failed", ref: ref, chain: leaf, live: func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue})
		}, want: "signing failed"},
		{name: "conflict on write", ref: ref, chain: leaf, writeErr: conflict, want: "changed while the certificate was being written"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live := req.DeepCopy()
			if tc.live != nil {
				tc.live(live)
			}
			w, rec := &fakeWriter{live: live, writeErr: tc.writeErr}, &recorder{}
			o := Issuer{Writer: w, Audit: rec, ReadOnly: tc.readOnly}.Upload(context.Background(), tc.ref, Upload{Chain: tc.chain})
			if len(rec.outcomes) != 1 {
				t.Fatalf("%d audit records, want 1", len(rec.outcomes))
			}
			if tc.want == "" {
				if o.Err != nil || len(w.written) != 1 || string(w.written[0].Status.Certificate) != string(leaf) || w.written[0].ResourceVersion != "42" {
					t.Fatalf("err %v, %d writes", o.Err, len(w.written))
				}
				if len(o.ServerWarnings) != 1 || o.Before == nil || o.After == nil {
					t.Errorf("outcome %+v lacks the server's warnings or the before/after", o)
				}
				return
			}
			if o.Err == nil || !strings.Contains(o.Err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", o.Err, tc.want)
			}
			if len(w.written) != 0 {
				t.Fatal("a refused upload was written")
			}
		})
	}
}
