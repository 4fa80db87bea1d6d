// Package testcluster gives integration tests the real devcluster that `make test`
// starts. It never skips: a test that asks for the cluster fails when the cluster
// is not there, so a missing cluster can never pass as green.
package testcluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// EnvDir names the environment variable holding the devcluster state directory.
const EnvDir = "DEVCLUSTER_DIR"

// Identities the devcluster writes kubeconfigs for.
const (
	Admin    = "admin"    // system:masters
	Auditor  = "auditor"  // read-only over the console's kinds
	Approver = "approver" // CSR approval for kubernetes.io/kube-apiserver-client only
)

// State is what `devcluster up` writes to ready.json once the control plane is ready.
type State struct {
	Server      string            `json:"server"`
	Version     string            `json:"version"`
	PID         int               `json:"pid"`
	Kubeconfigs map[string]string `json:"kubeconfigs"`
	Etcd        string            `json:"etcd"` // embedded etcd's client URL (see Compact)
}

// Require returns the running devcluster's state or fails the test.
func Require(t testing.TB) State {
	t.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		t.Fatalf("integration test needs the devcluster: %s is not set (run `make test`, which starts it)", EnvDir)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "ready.json"))
	if err != nil {
		t.Fatalf("integration test needs the devcluster: %v", err)
	}
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("devcluster ready.json: %v", err)
	}
	checkVersion(t, s)
	return s
}

// Kubeconfig returns the path of the kubeconfig for one identity.
func Kubeconfig(t testing.TB, identity string) string {
	t.Helper()
	s := Require(t)
	p, ok := s.Kubeconfigs[identity]
	if !ok {
		t.Fatalf("devcluster has no kubeconfig for %q", identity)
	}
	return p
}

// RestConfig returns a client config for one identity.
//
// Its client-side rate limit is high (200 QPS, burst 400) because the tests'
// own clients set up and check the cluster: at client-go's default (5 QPS,
// burst 10) a test checking 120 CSRs one GET each waited 22 s for its own
// limiter. The console under test keeps its own limits: the clients it makes
// from this config set them (internal/kube's clientConfig, 20 QPS; DeleteQPS;
// ReviewQPS; the approver's informers), or make one request (kube.Review).
func RestConfig(t testing.TB, identity string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", Kubeconfig(t, identity))
	if err != nil {
		t.Fatalf("kubeconfig for %s: %v", identity, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}
