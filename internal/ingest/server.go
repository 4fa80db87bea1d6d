package ingest

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server is the audit webhook's own listener: TLS always (the API server
// sends request and response bodies), a client certificate asked for when
// the receiver checks one, and none of the user-facing server's middleware:
// no sessions, no CSRF, one route.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Listen binds addr with the serving pair certFile/keyFile for rc. The pair
// is read again when its files change (keypair.go): a renewal needs no restart.
func Listen(addr, certFile, keyFile string, rc *Receiver, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	pair, err := loadKeyPair(certFile, keyFile, log)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: pair.GetCertificate}
	if rc.o.Senders.ClientCAs != nil {
		// Asked for, verified by the receiver (Senders.authenticated).
		cfg.ClientAuth = tls.RequestClientCert
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler:           rc,
		TLSConfig:         cfg,
		ReadHeaderTimeout: 10 * time.Second,
		// A batch of DefaultMaxBody at a slow pace, then its Append.
		ReadTimeout:    60 * time.Second,
		WriteTimeout:   90 * time.Second,
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return &Server{srv: srv, ln: tls.NewListener(ln, cfg)}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until ctx ends, then lets the batches in flight finish
// (their Append commits or fails) for up to 15 s.
func (s *Server) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if serr := <-done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
