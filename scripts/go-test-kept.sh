#!/usr/bin/env bash
# go-test-kept.sh NAME GO_TEST_ARGS... -- PACKAGES...: go test GO_TEST_ARGS
# PACKAGES (patterns such as ./... too) in the current directory's module, with
# the flags every test build shares (test-build-flags.sh) and each binary kept
# between runs, linked again only when its inputs changed (test-binaries.sh).
# For the go test runs of make that no other script makes: the devcluster
# modules' unit tests.
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)
source "$scripts/test-build-flags.sh"
source "$scripts/test-binaries.sh"
name=$1
shift
args=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
[ $# -gt 1 ] || { echo "usage: go-test-kept.sh NAME GO_TEST_ARGS... -- PACKAGES..." >&2; exit 2; }
shift
# Patterns become packages, so that packages sharing a last path element
# can go to separate groups.
mapfile -t pkgs < <(go list "$@")
go_test_kept "$name" "${test_build_flags[@]}" "${args[@]}" -- "${pkgs[@]}"
