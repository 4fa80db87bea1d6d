package edit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// bombBase is a base field as an attacker would craft it: a gzip stream of
// zeros that expands about a thousandfold, sent inside the editor's body limit.
func bombBase(expanded int) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	chunk := make([]byte, 1<<20)
	for n := 0; n < expanded; n += len(chunk) {
		_, _ = zw.Write(chunk)
	}
	_ = zw.Close()
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// hugeText is a YAML-like text of n distinct lines.
func hugeText(n int, tag string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  key%d: %s-%d\n", i, tag, i)
	}
	return b.String()
}

var bomb = bombBase(64 << 20)

// BenchmarkHostileBase decodes a base that would expand to 64 MiB.
func BenchmarkHostileBase(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = DecodeBase(bomb)
	}
}

// BenchmarkHugeDiff diffs two unrelated texts of 20,000 lines each (every
// line differs), as a forged base against a large object would.
func BenchmarkHugeDiff(b *testing.B) {
	from, to := hugeText(20000, "a"), hugeText(20000, "b")
	b.ReportAllocs()
	for b.Loop() {
		_ = Diff("t", "from", "to", from, to)
	}
}

// BenchmarkHugeRebase rebases across two unrelated texts of 20,000 lines.
func BenchmarkHugeRebase(b *testing.B) {
	base, mine, cur := hugeText(20000, "a"), hugeText(20000, "b"), hugeText(20000, "c")
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Rebase(base, mine, cur)
	}
}

// runBenchOnce runs a benchmark for one iteration, so that `go test` keeps it
// compiling and working without timing anything.
func runBenchOnce(t *testing.T, fn func(*testing.B)) testing.BenchmarkResult {
	t.Helper()
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "1x"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = flag.Set("test.benchtime", old) }()
	return testing.Benchmark(fn)
}

// TestHostileBaseIsRefused: a base that expands beyond the editor's limit is
// refused with ErrBaseTooLarge, having decompressed no more than the limit
// (allocations measured, not assumed).
func TestHostileBaseIsRefused(t *testing.T) {
	if len(bomb) > MaxText {
		t.Fatalf("the bomb (%d bytes) does not fit in a request", len(bomb))
	}
	if _, err := DecodeBase(bomb); !errors.Is(err, ErrBaseTooLarge) {
		t.Fatalf("DecodeBase of a %d-byte field expanding to 64 MiB: %v, want ErrBaseTooLarge", len(bomb), err)
	}
	exact := EncodeBase(strings.Repeat("a", MaxText))
	if got, err := DecodeBase(exact); err != nil || len(got) != MaxText {
		t.Fatalf("a base of exactly MaxText: %d bytes, %v", len(got), err)
	}
	allocs := runBenchOnce(t, BenchmarkHostileBase).AllocedBytesPerOp()
	// io.ReadAll grows its buffer by doubling: at most about 3 × the limit
	// (14 MiB measured), twice that under the race detector.
	if limit := int64(raceAllocFactor * (3*MaxText + 1<<20)); allocs > limit {
		t.Fatalf("decoding the bomb allocates %d bytes, more than %d (3 × MaxText, ×%d under -race)", allocs, limit, raceAllocFactor)
	}
}

// TestHugeDiffSaysTooLarge: two texts that differ in 20,000 × 20,000 lines are
// not diffed (400 million line pairs); the note says how large they are.
func TestHugeDiffSaysTooLarge(t *testing.T) {
	from, to := hugeText(20000, "a"), hugeText(20000, "b")
	d := Diff("t", "from", "to", from, to)
	if len(d.Lines) != 0 || !d.TooLarge || !strings.Contains(d.Note, "Too large to diff: 20000 × 20000 lines differ") {
		t.Fatalf("diff of 20,000 × 20,000 changed lines: %d lines, note %q", len(d.Lines), d.Note)
	}
	var tl *TooLargeError
	if _, err := Rebase(from, to, hugeText(20000, "c")); !errors.As(err, &tl) || tl.From != 20000 {
		t.Fatalf("rebase of 20,000 changed lines: %v, want a *TooLargeError", err)
	}
	// A small change inside a huge text is diffed: only what differs counts.
	edited := strings.Replace(from, "key10000: a-10000\n", "key10000: changed\n", 1)
	if d := Diff("t", "from", "to", from, edited); d.Added != 1 || d.Removed != 1 || d.TooLarge {
		t.Fatalf("one changed line in 20,000: +%d -%d, note %q", d.Added, d.Removed, d.Note)
	}
	if got, err := Rebase(from, edited, from+"  tail: x\n"); err != nil || !strings.Contains(got, "key10000: changed") {
		t.Fatalf("rebase of one changed line in 20,000: %v", err)
	}
	runBenchOnce(t, BenchmarkHugeDiff)
	runBenchOnce(t, BenchmarkHugeRebase)
}

func TestDifferingLines(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		n, m int
	}{
		{"", "", 0, 0},
		{"a\nb\nc\n", "a\nb\nc\n", 0, 0},
		{"a\nb\nc\n", "a\nX\nc\n", 1, 1},
		{"a\nb\nc\n", "a\nc\n", 1, 0},
		{"a\nbb\nc\n", "a\nxb\nc\n", 1, 1},
		{"x\n", "y\nz\n", 1, 2},
		{"a\nb", "a\nc", 1, 1},
	} {
		if n, m := differingLines(tt.a, tt.b); n != tt.n || m != tt.m {
			t.Errorf("differingLines(%q, %q) = %d, %d; want %d, %d", tt.a, tt.b, n, m, tt.n, tt.m)
		}
	}
}

// TestProblemParsesOnce: an answer with 1,000 field causes places them all in
// the text with one parse of it.
func TestProblemParsesOnce(t *testing.T) {
	err, flat := manyCauses(1000)
	text := hugeText(1000, "v")
	parses := 0
	orig := parseYAML
	parseYAML = func(s string) (*yaml.Node, error) { parses++; return orig(s) }
	t.Cleanup(func() { parseYAML = orig })
	p := Problem(err, "root:\n"+text)
	if parses != 1 {
		t.Fatalf("%d parses for 1,000 causes, want 1", parses)
	}
	if len(p.Causes) != 1000 {
		t.Fatalf("%d causes", len(p.Causes))
	}
	parses = 0
	p = Problem(err, flat)
	if parses != 1 || p.Causes[999].Line != 1000 {
		t.Fatalf("%d parses; cause 999 at line %d, want 1 parse and line 1000", parses, p.Causes[999].Line)
	}
	parses = 0
	IgnoredProblem([]IgnoredChange{{Field: "key1"}, {Field: "key2"}, {Field: "key3"}}, text)
	if parses != 1 {
		t.Fatalf("IgnoredProblem: %d parses for 3 fields, want 1", parses)
	}
	runBenchOnce(t, BenchmarkProblemManyCauses)
}

// manyCauses is an Invalid answer with n field causes, and the text they are in.
func manyCauses(n int) (error, string) {
	causes := make([]metav1.StatusCause, n)
	for i := range causes {
		causes[i] = metav1.StatusCause{Field: fmt.Sprintf("key%d", i), Message: "bad"}
	}
	err := apierrors.NewInvalid(schema.GroupKind{Kind: "X"}, "x", nil)
	err.ErrStatus.Details.Causes = causes
	return err, strings.ReplaceAll(hugeText(n, "v"), "  key", "key")
}

// BenchmarkProblemManyCauses maps 1,000 field causes to lines of a 1,000-line text.
func BenchmarkProblemManyCauses(b *testing.B) {
	err, text := manyCauses(1000)
	b.ReportAllocs()
	for b.Loop() {
		_ = Problem(err, text)
	}
}
