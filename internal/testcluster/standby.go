package testcluster

import (
	"context"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

// standbyReadyTimeout bounds the wait for a resumed instance's /readyz.
// After minutes paused it reconnects to etcd and re-lists what was
// compacted meanwhile, every seeded CRD included: seconds on a busy 2-core
// machine, not minutes.
const standbyReadyTimeout = 2 * time.Minute

// resumeStandby resumes a paused standby instance (SIGCONT) for the test,
// waits until it answers /readyz, and pauses it again (SIGSTOP) when the
// test ends, so that the rest of the suite does not pay for it. Cleanups run
// last-in first-out: a test that froze the instance itself
// (StopAPIServer) resumes it before this pauses it.
func resumeStandby(t testing.TB, a APIServer) {
	t.Helper()
	if err := syscall.Kill(a.PID, syscall.SIGCONT); err != nil {
		t.Fatalf("resume standby kube-apiserver %s (pid %d): %v", a.Server, a.PID, err)
	}
	t.Cleanup(func() {
		if err := syscall.Kill(a.PID, syscall.SIGSTOP); err != nil {
			t.Errorf("pause standby kube-apiserver %s (pid %d) again: %v", a.Server, a.PID, err)
		}
	})
	cfg := RestConfig(t, Admin)
	cfg.Host = a.Server
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), standbyReadyTimeout)
	defer cancel()
	var last error
	for {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			return
		}
		last = err
		select {
		case <-ctx.Done():
			t.Fatalf("standby kube-apiserver %s not ready %s after SIGCONT: %v (%s)", a.Server, standbyReadyTimeout, last, body)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
