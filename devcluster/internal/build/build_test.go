package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestIsPackageLine(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"k8s.io/kubernetes/pkg/controlplane", true},
		{"github.com/google/cel-go/common/types", true},
		{"go: downloading k8s.io/api v0.36.3", false},
		{"# k8s.io/kubernetes/pkg/foo", false},
		{"pkg/foo/bar.go:12:3: undefined: x", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isPackageLine(tt.line); got != tt.want {
			t.Errorf("isPackageLine(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestFreshFollowsModuleContent(t *testing.T) {
	mod := t.TempDir()
	write(t, filepath.Join(mod, "go.mod"), "module x\n")
	write(t, filepath.Join(mod, "go.sum"), "")
	bin := filepath.Join(t.TempDir(), "kube-apiserver")

	stamp, err := stampFor(mod, Default.ldflags())
	if err != nil {
		t.Fatal(err)
	}
	if fresh(bin, stamp) {
		t.Fatal("missing binary reported fresh")
	}
	write(t, bin, "binary")
	write(t, bin+".stamp", stamp+"\n")
	if !fresh(bin, stamp) {
		t.Fatal("binary with matching stamp reported stale")
	}

	write(t, filepath.Join(mod, "go.sum"), "k8s.io/api v0.36.4 h1:x\n")
	changed, err := stampFor(mod, Default.ldflags())
	if err != nil {
		t.Fatal(err)
	}
	if fresh(bin, changed) {
		t.Error("binary reported fresh after go.sum changed")
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLockMakesSecondBuilderWait(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	unlock, err := lock(context.Background(), dir, &out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	if _, err := lock(ctx, dir, &out); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: err = %v, want deadline exceeded", err)
	}
	if !strings.Contains(out.String(), "waiting for another devcluster") {
		t.Errorf("no waiting message, output %q", out.String())
	}
	unlock()
	unlock2, err := lock(context.Background(), dir, &out)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

func TestSourceStampFollowsProviderSourcesNotTests(t *testing.T) {
	mod := t.TempDir()
	write(t, filepath.Join(mod, "go.mod"), "module x\n")
	write(t, filepath.Join(mod, "main.go"), "package main\n")
	first, err := sourceStamp(mod)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mod, "main_test.go"), "package main\n")
	if again, _ := sourceStamp(mod); again != first {
		t.Error("adding a test changed the stamp: the provider would be rebuilt for nothing")
	}
	write(t, filepath.Join(mod, "login.html"), "<form>")
	withPage, _ := sourceStamp(mod)
	if withPage == first {
		t.Error("an embedded page does not change the stamp")
	}
	write(t, filepath.Join(mod, "main.go"), "package main // changed\n")
	if changed, _ := sourceStamp(mod); changed == withPage {
		t.Error("a source change does not change the stamp")
	}
}
