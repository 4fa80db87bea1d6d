#!/usr/bin/env bash
# go-test-integration.sh [MODULE_DIR]
# Runs the Go integration tests of one module (default: the repository's root
# module) and, once each, its integration benchmarks: the tests and benchmarks
# declared in files built only with the `integration` tag. The unit tests of the
# same packages are not run again (make test-unit ran them): `go test -tags
# integration ./...` alone would run every unit test a second time.
#
# Needs a devcluster ($DEVCLUSTER_DIR); integration tests fail without one.
# Packages run one at a time (-p 1): they share the one devcluster and some
# count or change its objects. Extra `go test` flags come from $GO_TEST_FLAGS.
#
# $INTEGRATION_ONLY (package directories, e.g. "./internal/faults ./cmd/x")
# runs only those packages; $INTEGRATION_EXCEPT runs all but those. make test
# gives one list to both, so its two lanes (scripts/integration-lanes.sh), each
# on its own devcluster, run every package exactly once between them. A name
# that is not an integration package of the module fails, so a renamed
# package cannot silently drop out of a lane.
set -euo pipefail
module=${1:-.}
cd "$(dirname "$0")/.."
# go test -json through scripts/testsummary: the plain output (ok/FAIL lines,
# the output of failing tests), then the 15 slowest tests, so the log says
# where CI's minutes go.
# Its own copy of the summary binary: two lanes run this script at once, and
# go build does not replace its output atomically.
summary_dir=$(mktemp -d)
trap 'rm -rf "$summary_dir"' EXIT
summary=$summary_dir/testsummary
source scripts/test-build-flags.sh
source scripts/test-binaries.sh # go_test_kept: each binary linked only when its inputs changed
go build "${test_build_flags[@]}" -o "$summary" ./scripts/testsummary
cd "$module"

# Test files of this module (not of nested modules), and which of them are
# integration files: those whose build constraint is exactly `integration`.
# One find (pruning node_modules and every directory that holds a nested
# module's go.mod) and one awk over all the files: a subprocess or two per test
# file took from 16 s to minutes on CI's loaded 2 cores.
nested=()
while read -r d; do nested+=(-o -path "$d"); done < <(find . -mindepth 2 -name node_modules -prune -o -name go.mod -printf '%h\n')
mapfile -t all < <(find . \( -name node_modules "${nested[@]}" \) -prune -o -name '*_test.go' -print | sort)
integration=() unit=()
if [ ${#all[@]} -gt 0 ]; then
  # each file's first line; FNR==1 is every file's first record
  mapfile -t integration < <(awk 'FNR == 1 && $0 == "//go:build integration" { print FILENAME } { nextfile }' "${all[@]}")
  mapfile -t unit < <(comm -23 <(printf '%s\n' "${all[@]}") <(printf '%s\n' "${integration[@]}"))
fi
names() { grep -hoE "^func $1[A-Z0-9_][A-Za-z0-9_]*\(" "$@" 2>/dev/null | sed -E "s/^func ($1[A-Za-z0-9_]*)\(/\1/" | sort -u || true; }
# TestMain is a package's set-up, not a test: -run never selects it, and
# several packages may each have one.
mapfile -t tests < <(names Test "${integration[@]}" | grep -vx TestMain)
mapfile -t benches < <(names Benchmark "${integration[@]}")
mapfile -t pkgs < <(printf '%s\n' "${integration[@]}" | sed -E 's|/[^/]*$||' | sort -u)

if [ -n "${INTEGRATION_ONLY:-}${INTEGRATION_EXCEPT:-}" ]; then
  for p in ${INTEGRATION_ONLY:-} ${INTEGRATION_EXCEPT:-}; do
    if ! printf '%s\n' "${pkgs[@]}" | grep -qxF -- "$p"; then
      echo "go-test-integration: $p (INTEGRATION_ONLY/INTEGRATION_EXCEPT) is not a package with integration tests in $module" >&2
      exit 1
    fi
  done
  if [ -n "${INTEGRATION_ONLY:-}" ]; then
    mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | grep -xF -f <(printf '%s\n' $INTEGRATION_ONLY))
  else
    mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | grep -vxF -f <(printf '%s\n' $INTEGRATION_EXCEPT))
  fi
fi

# One -run expression serves every package, so a unit test that shares its
# name with an integration test anywhere in the module would run here again:
# refuse that instead of running it twice.
if [ ${#unit[@]} -gt 0 ]; then
  clash=$(comm -12 <(printf '%s\n' "${tests[@]}") <(names Test "${unit[@]}"))
  if [ -n "$clash" ]; then
    echo "go-test-integration: these unit tests share a name with an integration test; rename one:" >&2
    echo "$clash" >&2
    exit 1
  fi
fi

join() { local IFS='|'; echo "$*"; }
# -timeout bounds each package's test binary: the largest, handlers', took
# 6 minutes (368 s) on a clean clone on 2 cores, so a test that hangs fails
# within 15 minutes instead of near CI's limit.
args=(-count=1 "${test_build_flags[@]}" -tags integration -p 1 -timeout 15m -run "^($(join "${tests[@]}"))\$")
if [ ${#benches[@]} -gt 0 ]; then
  # Each integration benchmark once, timing nothing: a benchmark that breaks fails here.
  args+=(-bench "^($(join "${benches[@]}"))\$" -benchtime 1x)
fi
echo "go-test-integration: ${#tests[@]} tests and ${#benches[@]} benchmarks in ${#pkgs[@]} packages of $module"
# The kept binaries' name (test-binaries.sh): one per module and lane, since
# make test's lanes run at the same time (INTEGRATION_ONLY is lane B's list,
# INTEGRATION_EXCEPT lane A's).
kept_name=integration-clusterdesk
[ "$module" = . ] || kept_name=integration-${module//[^a-z0-9]/-}
[ -z "${INTEGRATION_ONLY:-}" ] || kept_name+=-only
[ -z "${INTEGRATION_EXCEPT:-}" ] || kept_name+=-except
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
go_test_kept "$kept_name" -json "${args[@]}" ${GO_TEST_FLAGS:-} -- "${pkgs[@]}" | "$summary" -top 15
