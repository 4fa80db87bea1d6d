package testbinaries

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// script is scripts/test-binaries.sh, from this package's directory (go test
// runs a test in its package's directory).
func script(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "test-binaries.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// module writes a module of two packages whose paths end alike (a/x and
// b/x: go test -o DIR/ would name both binaries x.test) and returns its
// directory.
func module(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/kept\n\ngo 1.22\n",
		"a/x/x.go":       "package x\n\nfunc Name() string { return \"a\" }\n",
		"a/x/x_test.go":  "package x\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { t.Log(\"ran a\", Name()) }\n",
		"b/x/x.go":       "package x\n\nfunc Name() string { return \"b\" }\n",
		"b/x/x_test.go":  "package x\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { t.Log(\"ran b\", Name()) }\n",
		"c/only/only.go": "package only\n",
	}
	for name, body := range files {
		write(t, filepath.Join(dir, name), body)
	}
	return dir
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// packages are the module's packages the runs test (more in one test).
var packages = []string{"./a/x", "./b/x", "./c/only"}

// keptTest runs go_test_kept on pkgs in dir with the kept binaries under
// root and returns its output; it fails the test when the run fails.
func keptTest(t *testing.T, dir, root string, pkgs ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"-c", `set -euo pipefail; source "$0"; go_test_kept kept -count=1 -v -- "$@"`, script(t)}, pkgs...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CLUSTERDESK_TEST_BINARIES="+root, "GOFLAGS=-trimpath")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go_test_kept: %v\n%s", err, out)
	}
	return string(out)
}

// binaries returns the kept x.test binaries under root, by path. A binary
// go test links again is a new file (it is moved into place), while one it
// finds up to date is the same file (go test only touches its time), so
// os.SameFile tells a link from none.
func binaries(t *testing.T, root string) map[string]os.FileInfo {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(root, "*", "x.test"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]os.FileInfo{}
	for _, f := range found {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = st
	}
	return out
}

func mustRun(t *testing.T, out string, tests ...string) {
	t.Helper()
	for _, name := range tests {
		if !strings.Contains(out, "--- PASS: "+name) {
			t.Errorf("%s did not run and pass:\n%s", name, out)
		}
	}
}

// A second run links nothing that did not change and still runs every test;
// a change to one package links that package's binary again, and only it; a
// package added links its own.
func TestKeptBinariesAreLinkedOnlyWhenTheirInputsChange(t *testing.T) {
	dir, root := module(t), t.TempDir()

	mustRun(t, keptTest(t, dir, root, packages...), "TestA", "TestB")
	first := binaries(t, root)
	if len(first) != 2 {
		t.Fatalf("want a/x's and b/x's x.test in two directories under %s, found %v", root, first)
	}

	mustRun(t, keptTest(t, dir, root, packages...), "TestA", "TestB")
	second := binaries(t, root)
	for path, file := range first {
		if second[path] == nil || !os.SameFile(second[path], file) {
			t.Errorf("%s was written again although nothing it is built from changed", path)
		}
	}

	write(t, filepath.Join(dir, "a/x/x.go"), "package x\n\nfunc Name() string { return \"a, changed\" }\n")
	out := keptTest(t, dir, root, packages...)
	mustRun(t, out, "TestA", "TestB")
	if !strings.Contains(out, "ran a a, changed") {
		t.Errorf("the changed package's test did not run the changed code:\n%s", out)
	}
	changed := 0
	for path, file := range binaries(t, root) {
		if !os.SameFile(file, first[path]) {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d binaries were linked again after a change to one package, want 1", changed)
	}

	// A package added to the run links its own binary only.
	before := binaries(t, root)
	write(t, filepath.Join(dir, "d/y/y_test.go"), "package y\n\nimport \"testing\"\n\nfunc TestD(t *testing.T) {}\n")
	mustRun(t, keptTest(t, dir, root, append(packages, "./d/y")...), "TestA", "TestB", "TestD")
	for path, file := range binaries(t, root) {
		if !os.SameFile(file, before[path]) {
			t.Errorf("%s was linked again when a package was added to the run", path)
		}
	}
}

// A clean clone elsewhere runs the binaries another clone linked: with
// -trimpath (make test's scripts build with it), no build ID holds the
// checkout's directory.
func TestKeptBinariesServeACloneInAnotherDirectory(t *testing.T) {
	first, root := module(t), t.TempDir()
	mustRun(t, keptTest(t, first, root, packages...), "TestA", "TestB")
	linked := binaries(t, root)

	clone := module(t) // the same files, in another directory
	if clone == first {
		t.Fatal("the clone is not in another directory")
	}
	mustRun(t, keptTest(t, clone, root, packages...), "TestA", "TestB")
	for path, file := range binaries(t, root) {
		if !os.SameFile(file, linked[path]) {
			t.Errorf("%s was linked again for a clone of the same sources in another directory", path)
		}
	}
}

// While another run holds a kept directory, go_test_kept links into a
// temporary one instead of overwriting binaries the other run may be running,
// and removes it afterwards.
func TestKeptDirectoryInUseFallsBackToATemporaryOne(t *testing.T) {
	dir, root := module(t), t.TempDir()
	keptTest(t, dir, root, packages...)
	locks, err := filepath.Glob(filepath.Join(root, "*.lock"))
	if err != nil || len(locks) != 2 {
		t.Fatalf("want two lock files under %s, got %v (%v)", root, locks, err)
	}
	before := binaries(t, root)

	// flock holds both locks while the inner go_test_kept runs.
	cmd := exec.Command("flock", locks[0], "flock", locks[1], "bash", "-c",
		`set -euo pipefail; source "$0"; go_test_kept kept -count=1 -v -- ./a/x ./b/x ./c/only; echo "temporary: $TMPDIR"`, script(t))
	cmd.Dir = dir
	tmp := t.TempDir()
	cmd.Env = append(os.Environ(), "CLUSTERDESK_TEST_BINARIES="+root, "GOFLAGS=-trimpath", "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go_test_kept beside a run holding its directories: %v\n%s", err, out)
	}
	mustRun(t, string(out), "TestA", "TestB")
	if got := strings.Count(string(out), "another run is using"); got != 2 {
		t.Errorf("want both groups to say their directory is in use, %d did:\n%s", got, out)
	}
	for path, file := range binaries(t, root) {
		if !os.SameFile(file, before[path]) {
			t.Errorf("%s was written while another run held its directory", path)
		}
	}
	left, err := filepath.Glob(filepath.Join(tmp, "tmp.*"))
	if err != nil || len(left) != 0 {
		t.Errorf("temporary directories left behind: %v (%v)", left, err)
	}
}
