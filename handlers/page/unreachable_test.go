package page

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// refusedError is what client-go returns when nothing listens on the API
// server's port: a real dial to a port just closed.
func refusedError(t *testing.T) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = http.Get("http://" + addr + "/apis")
	if err == nil {
		t.Fatal("a closed port answered")
	}
	return fmt.Errorf("approve: %w", err)
}

func TestUnreachablePage(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		ok       bool
		contains string
	}{
		{"connection refused", refusedError(t), true, "nothing was sent"},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: context.DeadlineExceeded}, true, "nothing was sent"},
		{"reset mid-request", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, true, "may or may not"},
		{"cut short", &url.Error{Op: "Put", URL: "https://api/x", Err: io.ErrUnexpectedEOF}, true, "may or may not"},
		{"client timeout", &url.Error{Op: "Get", URL: "https://api/x", Err: context.DeadlineExceeded}, true, "may or may not"},
		{"an EOF not from a round trip", fmt.Errorf("read form: %w", io.EOF), false, ""},
		{"untrusted certificate", &url.Error{Op: "Get", URL: "https://api/x", Err: &tls.CertificateVerificationError{Err: errors.New("x509: certificate signed by unknown authority")}}, true, "nothing was sent"},
		{"the API server answered", apierrors.NewNotFound(schema.GroupResource{Resource: "x"}, "y"), false, ""},
		{"anything else", errors.New("template failed"), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := Unreachable(tt.err)
			if ok != tt.ok {
				t.Fatalf("Unreachable(%v) ok = %v, want %v", tt.err, ok, tt.ok)
			}
			if !ok {
				return
			}
			if p.Status != http.StatusServiceUnavailable || p.Title != "Cannot reach the cluster" || !strings.Contains(p.Message, tt.contains) ||
				len(p.Causes) != 1 || p.Causes[0] != tt.err.Error() {
				t.Errorf("page %+v", p)
			}
			if got := ErrorPage(tt.err); got.Status != http.StatusServiceUnavailable {
				t.Errorf("ErrorPage status %d, want 503", got.Status)
			}
		})
	}
}
