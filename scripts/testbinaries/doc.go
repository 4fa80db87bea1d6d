// Package testbinaries holds the tests of scripts/test-binaries.sh, which
// make test's scripts source to keep test binaries between runs. It has no
// code of its own.
package testbinaries
