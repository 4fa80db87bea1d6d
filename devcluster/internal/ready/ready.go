// Package ready writes ready.json, the file that tells tests and the console
// that a devcluster is up and how to reach it.
package ready

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Info is the content of ready.json.
type Info struct {
	Server      string            `json:"server"`
	Version     string            `json:"version"`
	PID         int               `json:"pid"`
	Kubeconfigs map[string]string `json:"kubeconfigs"`
	// Etcd is the embedded etcd's client URL (plain HTTP on loopback, with
	// etcd's JSON gateway), for fault tests that compact it.
	Etcd string `json:"etcd,omitempty"`
	// OIDC is the path of the OpenID provider's details (DIR/oidc/oidc.json:
	// issuer, CA file, clients and secrets, users and passwords); empty when
	// the release runs without one.
	OIDC string `json:"oidc,omitempty"`
	// AuditWebhook is what a console needs to serve as the API server's
	// audit webhook backend.
	AuditWebhook *AuditWebhook `json:"auditWebhook,omitempty"`
	// APIServers lists every kube-apiserver instance, the first being
	// Server's (the one the kubeconfigs and the controller manager use).
	APIServers []APIServer `json:"apiservers,omitempty"`
}

// APIServer is one kube-apiserver instance: its address (as listed in the
// default/kubernetes EndpointSlice), its process, and its log. Tests stop an
// instance with SIGSTOP and resume it with SIGCONT; the devcluster keeps
// running either way (instance 1's PID changes after SIGUSR1 and SIGUSR2).
//
// A standby instance (devcluster up --standby) was paused with SIGSTOP once
// the cluster was ready: whoever needs it resumes it with SIGCONT, waits for
// its /readyz, and pauses it again when done.
type APIServer struct {
	Server  string `json:"server"` // https://127.0.0.N:PORT
	PID     int    `json:"pid"`
	Log     string `json:"log"`
	Standby bool   `json:"standby,omitempty"`
}

// AuditWebhook is where the API server sends its audit batches and the key
// material of the backend's side: its serving pair for 127.0.0.1 (from the
// cluster CA the API server trusts) and the CA of the API server's client
// certificate.
type AuditWebhook struct {
	Listen       string `json:"listen"` // 127.0.0.1:PORT
	CertFile     string `json:"certFile"`
	KeyFile      string `json:"keyFile"`
	ClientCAFile string `json:"clientCAFile"`
}

// Write stores info at path atomically: readers see either no file or the
// whole of it, never a partial write.
func Write(path string, info Info) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ready-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Remove deletes the file at path; a missing file is not an error.
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
