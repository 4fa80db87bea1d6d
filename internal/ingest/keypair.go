package ingest

import (
	"bytes"
	"crypto/tls"
	"log/slog"
	"os"
	"sync"
)

// keyPair serves the webhook's certificate from its files and loads them
// again when they change, so a renewed pair (a Secret the kubelet updates in
// place, cert-manager's renewal) is served without a restart: a restart of
// every replica at once would refuse the API server's batches meanwhile.
//
// The files are read at each TLS handshake, not watched: the API server keeps
// its connections, so handshakes are few, and reading two small files is
// cheap beside a handshake; no watcher goroutine to stop, and a Secret's
// symlink swap is seen like any write. A pair that does not load (the
// certificate written, the key not yet) leaves the last good one in service.
type keyPair struct {
	certFile, keyFile string
	log               *slog.Logger

	mu              sync.Mutex
	cert            *tls.Certificate
	certPEM, keyPEM []byte // what cert was loaded from
	failed          bool   // the files on disk did not load (logged once per change)
}

// loadKeyPair loads the pair once; it fails when the files do not hold one.
func loadKeyPair(certFile, keyFile string, log *slog.Logger) (*keyPair, error) {
	kp := &keyPair{certFile: certFile, keyFile: keyFile, log: log}
	certPEM, keyPEM, err := kp.read()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	kp.cert, kp.certPEM, kp.keyPEM = &cert, certPEM, keyPEM
	return kp, nil
}

func (kp *keyPair) read() (certPEM, keyPEM []byte, err error) {
	if certPEM, err = os.ReadFile(kp.certFile); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = os.ReadFile(kp.keyFile); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// GetCertificate is the tls.Config hook: the pair as the files hold it now,
// or the last one that loaded.
func (kp *keyPair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	certPEM, keyPEM, err := kp.read()
	if err == nil && bytes.Equal(certPEM, kp.certPEM) && bytes.Equal(keyPEM, kp.keyPEM) {
		kp.failed = false
		return kp.cert, nil
	}
	if err == nil {
		var cert tls.Certificate
		if cert, err = tls.X509KeyPair(certPEM, keyPEM); err == nil {
			kp.cert, kp.certPEM, kp.keyPEM, kp.failed = &cert, certPEM, keyPEM, false
			kp.log.Info("audit webhook: serving the renewed certificate", "cert", kp.certFile)
			return kp.cert, nil
		}
	}
	if !kp.failed {
		kp.failed = true
		kp.log.Warn("audit webhook: the certificate files changed but do not load; serving the previous pair", "cert", kp.certFile, "key", kp.keyFile, "err", err)
	}
	return kp.cert, nil
}
