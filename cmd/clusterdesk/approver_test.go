package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestApproverFlags(t *testing.T) {
	dir := t.TempDir()
	// In a pod, the Lease goes to the pod's namespace.
	if err := os.WriteFile(filepath.Join(dir, "namespace"), []byte("ops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseApproverFlags([]string{"--in-cluster-dir", dir, "--dry-run"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.dryRun || c.leaseNamespace != "ops" || c.leaseName != "clusterdesk-approver" || c.workers != 2 || c.auditLog != "-" {
		t.Errorf("defaults: %+v", c)
	}
	c, err = parseApproverFlags([]string{"--in-cluster-dir", t.TempDir()})
	if err != nil || c.leaseNamespace != "clusterdesk" || c.dryRun {
		t.Errorf("outside a pod: %+v, %v", c, err)
	}
	if _, err := parseApproverFlags([]string{"--workers", "0"}); err == nil {
		t.Error("--workers 0 accepted")
	}
}
