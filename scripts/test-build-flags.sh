# test-build-flags.sh, sourced by the scripts that build test binaries
# (go-test-unit.sh, go-test-integration.sh, fuzz.sh): the go flags every one of
# their builds shares.
#
# -ldflags='-s -w': what go test links its binaries with anyway (no symbol
# table, no DWARF: stack traces and race reports come from the runtime's own
# tables), said here for fuzz.sh's `go test -c`, which would link DWARF in
# too: about 20% more link CPU, and linking is the unit layer's largest CPU
# cost (about 200 of its CPU seconds on CI's 2 cores went to `link`, 60 to
# `compile`).
# -trimpath: compiled packages no longer depend on the checkout's directory,
# so a clean clone somewhere else reuses the Go build cache of the same
# sources instead of compiling the module again for each new directory.
# shellcheck disable=SC2034 # used by the scripts that source this file
test_build_flags=(-trimpath "-ldflags=-s -w")
