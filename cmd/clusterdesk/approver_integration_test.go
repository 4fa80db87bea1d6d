//go:build integration

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestApproverBinaryLeadsAndReleasesItsLease runs `clusterdesk approver` as
// deployed (every flag of deploy/approver's Deployment is one it knows): it
// takes the Lease, reports itself leader on its metrics address, and on
// SIGTERM (a pod's shutdown) releases the Lease for the other replica at
// once instead of letting it wait for the Lease to expire.
func TestApproverBinaryLeadsAndReleasesItsLease(t *testing.T) {
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	bin := testcluster.ConsoleBin(t)
	help, _ := exec.Command(bin, "approver", "--help").CombinedOutput()
	dep := find(t, renderOverlay(t, "approver"), "Deployment", "clusterdesk-approver")
	c, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(c[0].(map[string]any), "args")
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.Contains(string(help), "  -"+name+" ") && !strings.Contains(string(help), "  -"+name+"\n") {
			t.Errorf("the approver's Deployment passes %s, which clusterdesk approver --help does not list:\n%s", a, help)
		}
	}

	lease := fmt.Sprintf("approver-bin-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = admin.CoordinationV1().Leases("default").Delete(ctx, lease, metav1.DeleteOptions{}) })
	cmd := exec.Command(bin, "approver", "--kubeconfig", testcluster.Kubeconfig(t, testcluster.Admin), "--dry-run",
		"--lease-namespace", "default", "--lease-name", lease, "--identity", "replica-under-test",
		"--metrics-addr", "127.0.0.1:0", "--audit-log", "",
		"--policy-selector", "approver-test=none-"+lease) // runs no policy: it must not act on the cluster's
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	metricsURL := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`metrics on (http://\S+/metrics)`)
		for s.Scan() {
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				metricsURL <- m[1]
			}
		}
		done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var url string
	select {
	case url = <-metricsURL:
	case <-time.After(30 * time.Second):
		t.Fatal("the approver did not say where its metrics are")
	}
	get := func(u string) string {
		resp, err := http.Get(u)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if h := get(strings.TrimSuffix(url, "metrics") + "healthz"); h != "ok\n" {
		t.Errorf("/healthz: %q", h)
	}
	holder := func() string {
		l, err := admin.CoordinationV1().Leases("default").Get(ctx, lease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	deadline := time.Now().Add(30 * time.Second)
	for holder() != "replica-under-test" || !strings.Contains(get(url), "clusterdesk_approver_is_leader 1") {
		if time.Now().After(deadline) {
			t.Fatalf("the approver does not lead: holder %q, metrics:\n%s", holder(), get(url))
		}
		time.Sleep(200 * time.Millisecond)
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the approver exited with %v on SIGINT, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the approver did not exit on SIGINT")
	}
	if h := holder(); h != "" {
		t.Errorf("after the approver stopped, the Lease is held by %q: not released", h)
	}
}
