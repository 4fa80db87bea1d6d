package kube

import (
	certificatesv1 "k8s.io/api/certificates/v1"
)

// The CSR cache keeps a decided request's spec.request as a summary (issue
// 27): its decoded content, which is what the queue's rows, search, checks
// and policies read, without the PEM's key and signature, which only the
// request's own page shows (it reads the request from the API server).
// Tens of thousands of decided requests each held their PEM for nothing.
// A pending request keeps its PEM: it may still be decided, and a decision
// is made on what the person saw. This package decodes no request (it is
// the bottom of the graph): the summary is the caller's, given with
// SummarizeDecidedRequests (main passes csr.Summarize).

// RequestSummarizer returns what the cache keeps of a decided request's
// spec.request, and false to keep it as it is (it does not decode, or is a
// summary already).
type RequestSummarizer func(request []byte) ([]byte, bool)

// SummarizeDecidedRequests makes the CSR informer keep each decided
// request's spec.request as fn summarizes it. Call it before Run.
func (c *Cache) SummarizeDecidedRequests(fn RequestSummarizer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.summarize = fn
}

// summarizeDecided replaces a decided request's spec.request with its
// summary. Approval and denial are final (the API server refuses to remove
// either condition), so a summarized object never becomes pending again:
// a request's next state arrives as a new object, transformed anew.
func summarizeDecided(c *certificatesv1.CertificateSigningRequest, fn RequestSummarizer) {
	if fn == nil || !decided(c) {
		return
	}
	if s, ok := fn(c.Spec.Request); ok {
		c.Spec.Request = s
	}
}

// decided reports whether c was approved or denied.
func decided(c *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved || cond.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}
