// Package etcd runs a single-member etcd inside the devcluster process, so no
// etcd binary has to be downloaded or built.
package etcd

import (
	"context"

	"fmt"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"net/url"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Server is a running embedded etcd.
type Server struct {
	// ClientURL is what kube-apiserver's --etcd-servers points at.
	ClientURL string
	etcd      *embed.Etcd
}

// Start runs etcd with its data in dataDir, serving clients on 127.0.0.1:clientPort
// and its (unused, but mandatory) peer listener on 127.0.0.1:peerPort. Its log
// goes to logPath.
func Start(dataDir, logPath string, clientPort, peerPort int) (*Server, error) {
	clientURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peerURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}

	cfg := embed.NewConfig()
	cfg.Name = "devcluster"
	cfg.Dir = dataDir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogOutputs = []string{logPath}
	cfg.LogLevel = "warn"
	// NewConfig leaves this at zero (only the etcd command line sets the
	// default), which would log every request as slow.
	cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
	// A lost write only matters if the machine itself crashes, and skipping
	// fsync makes loading a hundred fixture CRDs several times faster.
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after 60s, see %s", logPath)
	}
	return &Server{ClientURL: clientURL.String(), etcd: e}, nil
}

// Err reports a fatal error of the running server.
func (s *Server) Err() <-chan error { return s.etcd.Err() }

// Close stops etcd and waits until its data is on disk.
func (s *Server) Close() { s.etcd.Close() }

// Put writes one key straight into etcd, bypassing the API server. The demo
// seed uses it for an object the API server's validation would refuse today
// but that an older or buggy writer could have left behind.
func (s *Server) Put(ctx context.Context, key, value string) error {
	cli := v3client.New(s.etcd.Server)
	defer cli.Close()
	_, err := cli.Put(ctx, key, value)
	return err
}
