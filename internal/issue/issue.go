// Package issue writes, as the signed-in user, the certificate an external
// CA issued for an approved CertificateSigningRequest of a custom signer: the
// upload is parsed and checked against the request (its key, validity,
// usages, optionally a CA bundle), the request is read again and must still
// be the one the person saw, and status.certificate is written through the
// /status subresource. Every attempt is audited. It knows nothing of HTTP:
// the handler parses the form, calls Upload once and renders.
package issue

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Writer reads a CSR and writes its status.certificate as the signed-in user
// (kube.Writer). WriteCSRCertificate sends the object as given through
// UpdateStatus, so its UID and resourceVersion are the write's preconditions.
type Writer interface {
	ReadCSR(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error)
	WriteCSRCertificate(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (stored *certificatesv1.CertificateSigningRequest, warnings []string, err error)
}

// Auditor records each upload attempted, refused and failed ones included.
type Auditor interface {
	Issued(ctx context.Context, o Outcome)
}

// Issuer is the use case. Its zero Audit records nothing; Now defaults to
// time.Now.
type Issuer struct {
	Writer   Writer
	Audit    Auditor
	ReadOnly bool
	Now      func() time.Time
}

// Ref names the CSR as the person saw it: the upload is bound to that object
// (UID) in that version (resourceVersion), so a request replaced under the
// same name, or changed since, is not written.
type Ref struct {
	Name            string
	UID             types.UID
	ResourceVersion string
}

// Upload is what the form carries: the certificate (or chain, leaf first)
// and an optional CA bundle, both PEM.
type Upload struct {
	Chain  []byte
	Bundle []byte
}

// Outcome is one upload's result: the checks' warnings, the API server's
// warnings, the error (nil: written), and the CSR as read and as stored, for
// the audit trail.
type Outcome struct {
	Ref            Ref
	Warnings       []string // the checks' findings a person may accept
	ServerWarnings []string // the API server's Warning headers
	Err            error
	Before, After  *certificatesv1.CertificateSigningRequest
}

// Eligible explains why a CSR cannot take an uploaded certificate, or returns
// nil when it can: a custom signer's request that is approved, not denied or
// failed, and has no certificate yet. Its errors are *StateError.
func Eligible(c *certificatesv1.CertificateSigningRequest) error {
	if strings.HasPrefix(c.Spec.SignerName, "kubernetes.io/") {
		return stateErr(c.Name, "its signer %s is built into Kubernetes: the kube-controller-manager issues its certificates, not an upload", c.Spec.SignerName)
	}
	if len(c.Status.Certificate) > 0 {
		return stateErr(c.Name, "it already has a certificate, and the API server never lets status.certificate be replaced")
	}
	approved := false
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case certificatesv1.CertificateDenied:
			return stateErr(c.Name, "it was denied; a denied request gets no certificate")
		case certificatesv1.CertificateFailed:
			return stateErr(c.Name, "its signing failed (condition Failed); the requester must create a new request")
		case certificatesv1.CertificateApproved:
			approved = true
		}
	}
	if !approved {
		return stateErr(c.Name, "it is not approved yet; approve it first, then upload the certificate")
	}
	return nil
}

// StateError refuses an upload for what the CSR is (not approved, denied,
// already issued, a Kubernetes signer's), or for its having changed since the
// person saw it. Nothing was written.
type StateError struct {
	Name string
	msg  string
}

func (e *StateError) Error() string { return e.msg }

func stateErr(name, format string, args ...any) error {
	return &StateError{Name: name, msg: name + " cannot take an uploaded certificate: " + fmt.Sprintf(format, args...) + "."}
}

// Upload checks up and writes it to the CSR ref as the signed-in user. The
// upload is parsed and checked before any API call; then the CSR is read
// again (not the cache) and must be the object and version the person saw
// and still eligible; then status.certificate is written with that UID and
// resourceVersion as preconditions. The attempt is audited.
func (s Issuer) Upload(ctx context.Context, ref Ref, up Upload) Outcome {
	o := s.upload(ctx, ref, up)
	if s.Audit != nil {
		s.Audit.Issued(ctx, o)
	}
	return o
}

func (s Issuer) upload(ctx context.Context, ref Ref, up Upload) Outcome {
	o := Outcome{Ref: ref}
	if s.ReadOnly {
		o.Err = errReadOnly
		return o
	}
	if ref.UID == "" || ref.ResourceVersion == "" {
		o.Err = invalidf("The form does not say which version of %s it was made for (uid and resourceVersion); reload the page.", ref.Name)
		return o
	}
	chain, err := ParseCertificates(up.Chain, "the certificate", MaxChainCerts, MaxChainBytes)
	if err != nil {
		o.Err = err
		return o
	}
	var bundle []*x509.Certificate
	if len(strings.TrimSpace(string(up.Bundle))) > 0 {
		if bundle, err = ParseCertificates(up.Bundle, "the CA bundle", MaxBundleCerts, MaxBundleBytes); err != nil {
			o.Err = err
			return o
		}
	}
	live, err := s.Writer.ReadCSR(ctx, ref.Name)
	if err != nil {
		o.Err = err
		return o
	}
	o.Before = live
	if live.UID != ref.UID {
		o.Err = stateErr(ref.Name, "the request under this name was replaced since you looked (UID %s, now %s); review the new request", ref.UID, live.UID)
		return o
	}
	if live.ResourceVersion != ref.ResourceVersion {
		o.Err = stateErr(ref.Name, "it changed since you looked (resourceVersion %s, now %s); review it again", ref.ResourceVersion, live.ResourceVersion)
		return o
	}
	if o.Err = Eligible(live); o.Err != nil {
		return o
	}
	if o.Warnings, o.Err = Check(live, chain, bundle, s.now()); o.Err != nil {
		return o
	}
	next := live.DeepCopy()
	next.Status.Certificate = EncodeChain(chain)
	o.After, o.ServerWarnings, o.Err = s.Writer.WriteCSRCertificate(ctx, next)
	if apierrors.IsConflict(o.Err) {
		// The preconditions (UID, resourceVersion) are the ones the person
		// saw: a conflict means the request changed between the read and the
		// write. Nothing was written, and a retry would write on a version
		// nobody reviewed.
		o.Err = errors.Join(stateErr(ref.Name, "it changed while the certificate was being written; review it again"), o.Err)
	}
	return o
}

func (s Issuer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

var errReadOnly = apierrors.NewForbidden(schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests/status"}, "",
	errors.New("clusterdesk runs in read-only mode: no changes can be made through it"))
