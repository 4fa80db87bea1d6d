// Package faults holds integration tests that break the devcluster on
// purpose: the API server is stopped mid-session and started again. They live
// in a package of their own so that `go test -tags integration -p 1 ./...`
// runs them while no other package's tests use the cluster, and they leave
// the cluster healthy before they return, whether they pass or fail.
package faults
