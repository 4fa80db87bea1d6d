package page

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// Unreachable turns an error that means the API server could not be
// reached (no answer at all, as opposed to an answer refusing the request)
// into a 503 page that says so, and whether the request can have reached the
// server. ok is false for any other error. clusterdesk talks to nobody but
// the API server, so a failed round trip (*url.Error) or a network error is
// always one to it.
func Unreachable(err error) (model.ErrorPage, bool) {
	var status apierrors.APIStatus
	if err == nil || errors.As(err, &status) {
		return model.ErrorPage{}, false
	}
	var op *net.OpError
	var dns *net.DNSError
	var round *url.Error // an HTTP round trip to the API server failed
	// A TLS handshake that fails comes before the request is sent.
	var tlsErr *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	notSent := utilnet.IsConnectionRefused(err) || errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial") ||
		errors.As(err, &tlsErr) || errors.As(err, &header)
	if !notSent && !errors.As(err, &round) && !errors.As(err, &op) {
		return model.ErrorPage{}, false
	}
	p := model.ErrorPage{Status: http.StatusServiceUnavailable, Title: "Cannot reach the cluster"}
	if notSent {
		p.Message = "clusterdesk could not reach the Kubernetes API server, so nothing was sent and nothing changed. " +
			"Pages keep showing the data as of the last contact; try again once the cluster answers."
	} else {
		p.Message = "The connection to the Kubernetes API server failed during the request, so the change may or may not have been made. " +
			"Reload the page to see the current state before you try again."
	}
	p.Causes = []string{err.Error()}
	return p, true
}
