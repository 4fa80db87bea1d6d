// Command testsummary reads `go test -json` on stdin and prints what a plain
// `go test` would (each package's ok/FAIL line, benchmark results, the output
// of every test that fails, build errors), then the slowest tests of the run:
// so CI's log says where the minutes go without -v's noise.
//
//	go test -json ./... | go run ./scripts/testsummary -top 15
//
// -times FILE keeps every finished top-level test's duration across several
// `go test` runs (scripts/go-test-unit.sh runs three): each run appends to it,
// and the slowest are taken over all of it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, plus the
// build events of `go test -json`).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Elapsed    float64
	Output     string
}

type timing struct {
	seconds float64
	name    string // package/TestName
}

func main() {
	top := flag.Int("top", 15, "print the N slowest top-level tests at the end (0: none)")
	timesFile := flag.String("times", "", "append each test's duration to FILE and rank over all of FILE")
	flag.Parse()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()

	times := summarize(os.Stdin, out)
	if *timesFile != "" {
		f, err := os.OpenFile(*timesFile, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
		earlier := readTimes(f) // the file's offset is now at its end
		if err := appendTimes(f, times); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
		f.Close()
		times = append(earlier, times...)
	}
	if *top > 0 && len(times) > 0 {
		sort.SliceStable(times, func(i, j int) bool { return times[i].seconds > times[j].seconds })
		if len(times) > *top {
			times = times[:*top]
		}
		fmt.Fprintf(out, "the %d slowest tests:\n", len(times))
		for _, t := range times {
			fmt.Fprintf(out, "  %7.1fs  %s\n", t.seconds, t.name)
		}
	}
}

// summarize copies to out what a plain `go test` prints and returns the
// duration of every top-level test that finished.
func summarize(in io.Reader, out *bufio.Writer) []timing {
	var times []timing
	// The output of each running test, printed only if it fails: a passing
	// test's logs are what -v adds and plain `go test` hides.
	held := map[string][]string{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// not an event (a tool's own message): pass it on
			out.Write(line)
			out.WriteByte('\n')
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch {
		case e.Action == "build-output":
			out.WriteString(e.Output)
		case e.Test == "" && e.Action == "output":
			if e.Output != "PASS\n" { // -json's -v prints it; plain go test does not
				out.WriteString(e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			// a package that panicked or timed out: show what its
			// unfinished tests printed
			for k, lines := range held {
				if strings.HasPrefix(k, e.Package+"\x00") {
					out.WriteString(strings.Join(lines, ""))
					delete(held, k)
				}
			}
		case e.Test == "":
		case strings.HasPrefix(e.Test, "Benchmark"):
			// the result lines, not -v's "=== RUN" or bare name lines
			if e.Action == "output" && !strings.HasPrefix(e.Output, "=== ") &&
				!(strings.HasPrefix(e.Output, "Benchmark") && !strings.Contains(e.Output, "\t")) {
				out.WriteString(e.Output)
			}
		case e.Action == "output":
			held[key] = append(held[key], e.Output)
		case e.Action == "fail":
			out.WriteString(strings.Join(held[key], ""))
			delete(held, key)
			fallthrough
		case e.Action == "pass" || e.Action == "skip":
			delete(held, key)
			if !strings.Contains(e.Test, "/") && e.Action != "skip" {
				times = append(times, timing{e.Elapsed, shortPkg(e.Package) + "." + e.Test})
			}
		}
		if out.Buffered() > 0 && e.Test == "" {
			out.Flush() // a package's result shows when it ends
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
	}
	return times
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/clusterdesk/clusterdesk/")
}

func readTimes(f *os.File) []timing {
	var ts []timing
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s, name, ok := strings.Cut(sc.Text(), "\t")
		if v, err := strconv.ParseFloat(s, 64); ok && err == nil {
			ts = append(ts, timing{v, name})
		}
	}
	return ts
}

func appendTimes(f *os.File, ts []timing) error {
	w := bufio.NewWriter(f)
	for _, t := range ts {
		fmt.Fprintf(w, "%.2f\t%s\n", t.seconds, t.name)
	}
	return w.Flush()
}
