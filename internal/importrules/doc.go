// Package importrules holds only a test: the layering rules of
// ARCHITECTURE.md ("Imports flow one way") checked with `go list` on every
// `go test ./...`, so a forbidden import fails CI instead of waiting for a
// reviewer to notice it.
package importrules
