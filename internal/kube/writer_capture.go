package kube

import (
	"context"
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// CSRCapture receives the CSR as DecideCSR read it and as the API server
// stored it, for the audit trail's resourceVersions and diff. It travels in the
// call's context (WithCSRCapture), so wrappers such as UserWriter pass it on.
type CSRCapture struct {
	mu            sync.Mutex
	Before, After *certificatesv1.CertificateSigningRequest
}

type csrCaptureKey struct{}

// WithCSRCapture returns ctx carrying a new capture for one DecideCSR call.
func WithCSRCapture(ctx context.Context) (context.Context, *CSRCapture) {
	c := &CSRCapture{}
	return context.WithValue(ctx, csrCaptureKey{}, c), c
}

// Versions returns the captured objects (nil when not reached).
func (c *CSRCapture) Versions() (before, after *certificatesv1.CertificateSigningRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Before, c.After
}

// captureCSR records the live object read (after == false) or stored.
func captureCSR(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, after bool) {
	c, ok := ctx.Value(csrCaptureKey{}).(*CSRCapture)
	if !ok || csr == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if after {
		c.After = csr.DeepCopy()
	} else {
		c.Before = csr.DeepCopy()
	}
}
