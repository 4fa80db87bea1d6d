package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kubeconfigYAML = `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.crt
- name: prod
  cluster:
    server: https://prod.example:6443
contexts:
- name: dev
  context: {cluster: dev, user: admin}
- name: prod
  context: {cluster: prod, user: admin}
- name: orphan
  context: {cluster: gone, user: admin}
users:
- name: admin
  user: {token: secret}
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfigErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good", kubeconfigYAML)
	tests := []struct {
		name, path, context, want string
	}{
		{"missing file", filepath.Join(dir, "nope"), "", "kubeconfig " + dir + "/nope: no such file"},
		{"directory", dir, "", "kubeconfig " + dir + ": is a directory"},
		{"bad YAML", writeFile(t, dir, "bad", "clusters: [a\n"), "",
			"kubeconfig " + dir + "/bad: invalid YAML: yaml: line 1: did not find expected ',' or ']'"},
		{"not a mapping", writeFile(t, dir, "scalar", "hello\n"), "",
			"kubeconfig " + dir + "/scalar: not a kubeconfig (the document is not a YAML mapping)"},
		{"wrong shape", writeFile(t, dir, "shape", "apiVersion: v1\nkind: Config\nclusters: 3\n"), "",
			"kubeconfig " + dir + "/shape: not a valid kubeconfig: json: cannot unmarshal number into Go struct field Config.clusters of type []v1.NamedCluster"},
		{"unknown context", good, "foo", "kubeconfig " + good + `: context "foo" not found`},
		{"context without cluster", good, "orphan", "kubeconfig " + good + `: context "orphan" names cluster "gone", which is not defined`},
		{"no current context", writeFile(t, dir, "empty", ""), "", "kubeconfig " + dir + "/empty: no current-context is set and no context was given"},
		{"missing CA file", good, "dev", "kubeconfig " + good + `: context "dev": invalid configuration: unable to read certificate-authority ` +
			dir + "/ca.crt for dev due to open " + dir + "/ca.crt: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadConfig(tt.path, tt.context)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("LoadConfig error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "config", kubeconfigYAML)
	writeFile(t, dir, "ca.crt", "")

	cfg, desc, err := LoadConfig(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != "secret" {
		t.Errorf("host %q token %q", cfg.Host, cfg.BearerToken)
	}
	// Relative certificate paths resolve against the kubeconfig's directory, as in kubectl.
	if want := filepath.Join(dir, "ca.crt"); cfg.CAFile != want {
		t.Errorf("CAFile %q, want %q", cfg.CAFile, want)
	}
	if want := "kubeconfig " + path + ", context dev, server https://127.0.0.1:6443"; desc != want {
		t.Errorf("description %q, want %q", desc, want)
	}

	cfg, _, err = LoadConfig(path, "prod")
	if err != nil || cfg.Host != "https://prod.example:6443" {
		t.Fatalf("context prod: host %v, err %v", cfg, err)
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")

	if HasDefaultKubeconfig() {
		t.Error("HasDefaultKubeconfig with no $KUBECONFIG and no ~/.kube/config")
	}
	_, _, err := LoadConfig("", "")
	if want := "no kubeconfig: $KUBECONFIG is unset and ~/.kube/config does not exist"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}

	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	homeConfig := writeFile(t, filepath.Join(home, ".kube"), "config", kubeconfigYAML)
	writeFile(t, filepath.Join(home, ".kube"), "ca.crt", "")
	if !HasDefaultKubeconfig() {
		t.Error("HasDefaultKubeconfig false with ~/.kube/config present")
	}
	if _, desc, err := LoadConfig("", ""); err != nil || !strings.HasPrefix(desc, "kubeconfig "+homeConfig+",") {
		t.Fatalf("~/.kube/config: desc %q, err %v", desc, err)
	}

	// $KUBECONFIG wins over ~/.kube/config; missing entries are skipped, like kubectl.
	other := writeFile(t, t.TempDir(), "other", strings.ReplaceAll(kubeconfigYAML, "current-context: dev", "current-context: prod"))
	t.Setenv("KUBECONFIG", filepath.Join(home, "missing")+string(filepath.ListSeparator)+other)
	if !HasDefaultKubeconfig() {
		t.Error("HasDefaultKubeconfig false with $KUBECONFIG set")
	}
	cfg, desc, err := LoadConfig("", "")
	if err != nil || cfg.Host != "https://prod.example:6443" || !strings.HasPrefix(desc, "kubeconfig "+other+", context prod") {
		t.Fatalf("$KUBECONFIG: desc %q, err %v", desc, err)
	}

	t.Setenv("KUBECONFIG", filepath.Join(home, "missing"))
	_, _, err = LoadConfig("", "")
	if want := "kubeconfig " + filepath.Join(home, "missing") + " (from $KUBECONFIG): no such file"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}
