#!/usr/bin/env bash
# go-test-unit.sh: the module's unit tests, each once, and every Go benchmark
# once (timing nothing: a benchmark that breaks fails here).
#
# A package runs with the race detector when its code or its tests can run on
# more than one goroutine: a `go` statement, sync or sync/atomic, a channel,
# t.Parallel, httptest (servers answer on goroutines of their own), errgroup.
# The rest run without it: the race detector finds nothing in code that runs on
# one goroutine, and it costs about 16 times the CPU there (internal/docs'
# test over every real CRD description: 3.4 s plain, 55 s with -race), which
# on CI's 2 cores is minutes for nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

concurrent='^\s*go [a-zA-Z(]|"sync"|"sync/atomic"|chan |t\.Parallel\(\)|httptest\.|errgroup'
race=() plain=() race_bench=()
while read -r pkg dir; do
  if grep -qE "$concurrent" "$dir"/*.go 2>/dev/null; then
    race+=("$pkg")
    # Its benchmarks run in a third go test, built without -race: only the
    # packages that have one (a unit test file, not an integration one,
    # declaring func Benchmark...), so the others are not linked a third time
    # for nothing (25 of 41 test binaries).
    if [ -n "$(awk 'FNR == 1 && $0 == "//go:build integration" { nextfile } /^func Benchmark/ { print FILENAME; exit }' "$dir"/*_test.go 2>/dev/null)" ]; then
      race_bench+=("$pkg")
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
go build -o "$summary" ./scripts/testsummary
times=$(mktemp)
trap 'rm -f "$times"' EXIT
source scripts/test-build-flags.sh
flags=(-count=1 -json "${test_build_flags[@]}")
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
go test -race "${flags[@]}" ${GO_TEST_FLAGS:-} "${race[@]}" | "$summary" -top 0 -times "$times"
if [ ${#plain[@]} -gt 0 ]; then
  # shellcheck disable=SC2086
  go test "${flags[@]}" -bench . -benchtime 1x ${GO_TEST_FLAGS:-} "${plain[@]}" | "$summary" -top 0 -times "$times"
fi
# The benchmarks of the -race packages, without it and without their tests
# (-run '^$'): under the race detector internal/kube's CRD heap benchmark alone
# took 350 s.
# shellcheck disable=SC2086
go test "${flags[@]}" -run '^$' -bench . -benchtime 1x ${GO_TEST_FLAGS:-} "${race_bench[@]}" | "$summary" -top 15 -times "$times"
