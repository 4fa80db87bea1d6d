package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInClusterConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		host    string
		port    string
		files   map[string]string
		wantErr string
		want    string // Host
	}{
		{name: "no env", files: map[string]string{"token": "t", "ca.crt": "x"}, wantErr: "KUBERNETES_SERVICE_HOST"},
		{name: "no token", host: "10.0.0.1", port: "443", files: map[string]string{"ca.crt": "x"}, wantErr: "service-account token"},
		{name: "no ca", host: "10.0.0.1", port: "443", files: map[string]string{"token": "t"}, wantErr: "CA bundle"},
		{name: "ipv4", host: "10.0.0.1", port: "443", files: map[string]string{"token": "tok\n", "ca.crt": "x", "namespace": "cd"}, want: "https://10.0.0.1:443"},
		{name: "ipv6", host: "fd00::1", port: "6443", files: map[string]string{"token": "tok", "ca.crt": "x"}, want: "https://[fd00::1]:6443"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []string{"token", "ca.crt", "namespace"} {
				os.Remove(filepath.Join(dir, f))
			}
			for f, d := range tc.files {
				write(f, d)
			}
			t.Setenv("KUBERNETES_SERVICE_HOST", tc.host)
			t.Setenv("KUBERNETES_SERVICE_PORT", tc.port)
			cfg, desc, err := InClusterConfig(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tc.want || cfg.BearerToken != "tok" || cfg.BearerTokenFile != filepath.Join(dir, "token") || cfg.CAFile != filepath.Join(dir, "ca.crt") {
				t.Errorf("config = host %q token %q file %q ca %q", cfg.Host, cfg.BearerToken, cfg.BearerTokenFile, cfg.CAFile)
			}
			if _, hasNS := tc.files["namespace"]; hasNS != strings.Contains(desc, "namespace cd") {
				t.Errorf("description %q", desc)
			}
		})
	}
}

func TestResolveConfigPrefersKubeconfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	// In a pod without a kubeconfig: the service account, from the given directory.
	_, _, err := ResolveConfig("", "", filepath.Join(home, "sa"))
	if err == nil || !strings.Contains(err.Error(), "in-cluster config") {
		t.Errorf("in a pod without kubeconfig: err = %v, want the in-cluster loader's", err)
	}
	// An explicit kubeconfig wins over the pod's service account.
	_, _, err = ResolveConfig(filepath.Join(home, "missing"), "", "")
	if err == nil || !strings.Contains(err.Error(), "kubeconfig") || strings.Contains(err.Error(), "in-cluster") {
		t.Errorf("explicit kubeconfig: err = %v, want the kubeconfig loader's", err)
	}
	// Outside a pod, a missing kubeconfig is reported as such.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, _, err = ResolveConfig("", "", "")
	if err == nil || !strings.Contains(err.Error(), "no kubeconfig") {
		t.Errorf("outside a pod: err = %v", err)
	}
}
