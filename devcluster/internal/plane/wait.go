package plane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/procs"
)

const pollInterval = 100 * time.Millisecond

// WaitAPIServer polls server's /readyz as the bearer of token until it
// answers 200, the process exits, or timeout passes.
func WaitAPIServer(ctx context.Context, p *procs.Proc, server string, caPEM []byte, token string, timeout time.Duration) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return errors.New("no CA certificate to verify the API server with")
	}
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}},
	}
	return poll(ctx, p, client, server+"/readyz", "Bearer "+token, timeout)
}

// WaitOIDCProvider polls the provider's discovery document, verifying its
// certificate with caPEM as kube-apiserver will, until it answers 200.
func WaitOIDCProvider(ctx context.Context, p *procs.Proc, issuer string, caPEM []byte, timeout time.Duration) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return errors.New("no CA certificate to verify the OpenID provider with")
	}
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}},
	}
	return poll(ctx, p, client, issuer+"/.well-known/openid-configuration", "", timeout)
}

// WaitControllerManager polls the controller manager's /healthz, which it
// serves without authentication, until it answers 200.
func WaitControllerManager(ctx context.Context, p *procs.Proc, port int, timeout time.Duration) error {
	client := &http.Client{
		Timeout: 2 * time.Second,
		// Its serving certificate is self-signed in memory at start; the
		// address is loopback and the answer carries nothing secret.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	return poll(ctx, p, client, fmt.Sprintf("https://127.0.0.1:%d/healthz", port), "", timeout)
}

func poll(ctx context.Context, p *procs.Proc, client *http.Client, url, authorization string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-p.Done():
			return fmt.Errorf("%s exited (%v) before it was ready; see %s", p.Name, p.Err(), p.LogPath)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (last: %s); see %s", p.Name, timeout, last, p.LogPath)
		case <-tick.C:
		}
	}
}
