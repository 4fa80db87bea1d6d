#!/usr/bin/env bash
# go-test-unit.sh: the module's unit tests, each once, and every Go benchmark
# once (timing nothing: a benchmark that breaks fails here).
#
# A package runs with the race detector when its tests can run it on more
# than one goroutine: its code starts goroutines (a `go` statement, errgroup)
# or uses channels, or its tests do, or they use sync or sync/atomic,
# t.Parallel or httptest (servers answer on goroutines of their own). Code
# that only locks (sync in the package's code, no goroutine of its own or of
# its tests) is called concurrently by other packages, whose tests run it
# that way under -race; its own tests call it from one goroutine.
# The rest run without it: the race detector finds nothing in code that runs on
# one goroutine, and it costs about 16 times the CPU there (internal/docs'
# test over every real CRD description: 3.4 s plain, 55 s with -race), which
# on CI's 2 cores is minutes for nothing. (Stop 58: the rule looked at sync in
# the code too, which put ten packages under -race whose tests start no
# goroutine, internal/edit's 128 s of CI among them.)
set -euo pipefail
cd "$(dirname "$0")/.."

code_concurrent='^\s*go [a-zA-Z(]|chan |errgroup'
tests_concurrent='^\s*go [a-zA-Z(]|"sync"|"sync/atomic"|chan |t\.Parallel\(\)|httptest\.|errgroup'
race=() plain=() third=() norace_tests=()
while read -r pkg dir; do
  code=() tests=()
  for f in "$dir"/*.go; do
    case $f in *_test.go) tests+=("$f") ;; *) code+=("$f") ;; esac
  done
  if { [ ${#code[@]} -gt 0 ] && grep -qE "$code_concurrent" "${code[@]}"; } ||
     { [ ${#tests[@]} -gt 0 ] && grep -qE "$tests_concurrent" "${tests[@]}"; }; then
    race+=("$pkg")
    # A third go test, built without -race, runs the benchmarks of these
    # packages and their tests (and fuzz targets' seeds) that run on one
    # goroutine alone, in files
    # built with `//go:build !race` (so the -race pass does not build them):
    # whole-estate computations the race detector only slows down (internal/
    # kube's CRD heap and schema round trip over every real CRD took 76 s
    # under it). Only the packages that have either are built a third time
    # (16 of 41 test binaries): linking is the unit layer's largest cost.
    mapfile -t own < <(awk 'FNR == 1 && $0 == "//go:build !race" { norace = 1 } FNR == 1 && $0 != "//go:build !race" { norace = 0 }
      FNR == 1 && $0 == "//go:build integration" { nextfile }
      /^func Benchmark/ { print "bench" }
      norace && /^func (Test|Fuzz)[A-Z0-9_]/ { sub(/^func /, ""); sub(/\(.*/, ""); print }' "$dir"/*_test.go 2>/dev/null | sort -u)
    if [ ${#own[@]} -gt 0 ]; then
      third+=("$pkg")
      for n in "${own[@]}"; do [ "$n" = bench ] || norace_tests+=("$n"); done
    fi
  else
    plain+=("$pkg")
  fi
done < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)
echo "go-test-unit: ${#race[@]} packages with -race, ${#plain[@]} without (they run on one goroutine): ${plain[*]##*/clusterdesk/}"
# Each go test runs with -json through scripts/testsummary, which prints what
# a plain go test would and keeps every test's duration in $times; the last
# run prints the 15 slowest tests of all three, so the log says where the
# minutes go.
summary=$PWD/.cache/bin/testsummary
source scripts/test-build-flags.sh
source scripts/test-binaries.sh # go_test_kept: each binary linked only when its inputs changed
go build "${test_build_flags[@]}" -o "$summary" ./scripts/testsummary
times=$(mktemp)
trap 'rm -f "$times"' EXIT
flags=(-count=1 -json "${test_build_flags[@]}")
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
go_test_kept unit-race -race "${flags[@]}" ${GO_TEST_FLAGS:-} -- "${race[@]}" | "$summary" -top 0 -times "$times"
if [ ${#plain[@]} -gt 0 ]; then
  # shellcheck disable=SC2086
  go_test_kept unit-plain "${flags[@]}" -bench . -benchtime 1x ${GO_TEST_FLAGS:-} -- "${plain[@]}" | "$summary" -top 0 -times "$times"
fi
# The third pass: the benchmarks of the -race packages and their one-goroutine
# tests (see above), without -race. Its -run list is the names of those tests
# only; one list serves every package, so a -race test sharing such a name
# elsewhere would run twice: refuse that.
run='^$'
if [ ${#norace_tests[@]} -gt 0 ]; then
  clash=$(grep -hoE '^func ((Test|Fuzz)[A-Za-z0-9_]+)\(' $(go list -f '{{$d := .Dir}}{{range .TestGoFiles}}{{$d}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$d}}/{{.}} {{end}}' "${race[@]}") |
    sed -E 's/^func ((Test|Fuzz)[A-Za-z0-9_]+)\(/\1/' | sort | uniq -d | grep -xF -f <(printf '%s\n' "${norace_tests[@]}") || true)
  if [ -n "$clash" ]; then
    echo "go-test-unit: these //go:build !race tests share a name with another test; rename one:" >&2
    echo "$clash" >&2
    exit 1
  fi
  run="^($(IFS='|'; echo "${norace_tests[*]}"))\$"
fi
# shellcheck disable=SC2086
go_test_kept unit-third "${flags[@]}" -run "$run" -bench . -benchtime 1x ${GO_TEST_FLAGS:-} -- "${third[@]}" | "$summary" -top 15 -times "$times"
