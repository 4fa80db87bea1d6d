// Package faults holds integration tests that break things on purpose, against
// the real devcluster: the console cut off from the API server for 30 s by a
// loopback proxy while another client keeps writing (outage), the API server
// restarted after etcd was changed behind its back and compacted, so the
// console's watches end with 410 Gone (compaction), and 20 editors applying to
// one object at once through the console's editor (editors). They live in a
// package of their own so that `go test -tags integration -p 1 ./...` runs them
// while no other package's tests use the cluster, and they leave the cluster
// healthy before they return, whether they pass or fail.
package faults
