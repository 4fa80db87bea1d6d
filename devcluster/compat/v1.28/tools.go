//go:build tools

// Package compat pins kube-apiserver v1.28.15 for devcluster's compat build
// (devcluster build --version 1.28); `go mod tidy` keeps its dependencies.
package compat

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
