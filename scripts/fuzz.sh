#!/usr/bin/env bash
# fuzz.sh FUZZTIME PKG:FUZZFUNC...
# Runs each fuzz target for FUZZTIME (an execution count like 5000x, or a
# duration), building each package's instrumented test binary once: `go test
# -fuzz` takes one target per run and builds and links the binary each time,
# and a second target of the same package would wait for that again.
# `go test -c -fuzz=.` builds the same binary `go test -fuzz=^F$` runs (the
# coverage instrumentation does not depend on the target); it is run as go test
# runs it: in the package's directory (the seed corpus in testdata/fuzz, where a
# crasher is written), with the fuzz cache under GOCACHE and a 10-minute limit.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=$1; shift
root=$PWD
source scripts/test-build-flags.sh
source scripts/test-binaries.sh
# The fuzzing binaries (built with -fuzz's instrumentation) are kept between
# runs, as go test's are (test-binaries.sh): go test -c -o FILE links only
# when the binary in FILE is not up to date.
keep_binaries_in fuzz
trap release_kept_dir EXIT
bins=$kept_dir
cache=$(go env GOCACHE)/fuzz
declare -A built=()
for t in "$@"; do
  pkg=${t%%:*} fn=${t#*:}
  bin=$bins/${pkg//\//_}.test
  if [ -z "${built[$pkg]:-}" ]; then
    go test -c "${test_build_flags[@]}" -fuzz=. -o "$bin" "./$pkg"
    built[$pkg]=1
  fi
  importpath=$(go list "./$pkg")
  echo "fuzz: $fn in ./$pkg for $fuzztime"
  start=$(date +%s%N)
  (cd "$root/$pkg" && "$bin" -test.paniconexit0 -test.fuzzcachedir="$cache/$importpath" -test.timeout=10m \
    -test.run='^$' -test.fuzz="^$fn\$" -test.fuzztime="$fuzztime") 2>&1 | grep -v '^fuzz: elapsed'
  ms=$((($(date +%s%N) - start) / 1000000))
  printf 'ok  \t%s\t%s %d.%01ds\n' "$importpath" "$fn" $((ms / 1000)) $((ms % 1000 / 100))
done
