package testcluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// APIServer is one kube-apiserver instance of the devcluster (ready.json's
// "apiservers"): every instance serves on the same port at 127.0.0.N and is
// listed in the default/kubernetes EndpointSlice.
//
// Standby instances (make test starts the integration devcluster with
// `devcluster up --standby`) are paused until a test asks for them:
// APIServers resumes them for the test and pauses them again after it.
type APIServer struct {
	Server  string `json:"server"` // https://127.0.0.N:PORT
	PID     int    `json:"pid"`
	Log     string `json:"log"`
	Standby bool   `json:"standby"`
}

// APIServers returns the devcluster's kube-apiserver instances, or fails the
// test (never skips) when it runs fewer than min: `make test` starts two
// (Makefile TEST_APISERVERS); a devcluster started by hand needs
// DEVCLUSTER_APISERVERS=2 (scripts/with-devcluster.sh).
func APIServers(t testing.TB, min int) []APIServer {
	t.Helper()
	Require(t)
	raw, err := os.ReadFile(filepath.Join(os.Getenv(EnvDir), "ready.json"))
	if err != nil {
		t.Fatalf("devcluster ready.json: %v", err)
	}
	var s struct {
		APIServers []APIServer `json:"apiservers"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("devcluster ready.json: %v", err)
	}
	if len(s.APIServers) < min {
		t.Fatalf("the test needs %d kube-apiserver instances, the devcluster runs %d: start it with DEVCLUSTER_APISERVERS=%d (a devcluster binary without --apiservers lists none: run `make devcluster`)",
			min, len(s.APIServers), min)
	}
	for _, a := range s.APIServers {
		if a.Standby {
			resumeStandby(t, a)
		}
	}
	return s.APIServers
}

// StopAPIServer freezes one instance (SIGSTOP): it stays listed in the
// EndpointSlice, as a crashed instance stays listed until its lease expires,
// and answers nothing. The test's cleanup resumes it (SIGCONT); until then
// nobody else may need that instance (clients of the other tests use instance 1,
// so never stop that one here).
func StopAPIServer(t testing.TB, a APIServer) {
	t.Helper()
	if a.Server == Require(t).Server {
		t.Fatalf("StopAPIServer(%s): that is the kubeconfigs' instance, every other test's", a.Server)
	}
	if err := syscall.Kill(a.PID, syscall.SIGSTOP); err != nil {
		t.Fatalf("stop kube-apiserver %s (pid %d): %v", a.Server, a.PID, err)
	}
	t.Cleanup(func() {
		if err := syscall.Kill(a.PID, syscall.SIGCONT); err != nil {
			t.Errorf("resume kube-apiserver %s (pid %d): %v", a.Server, a.PID, err)
		}
	})
}
