//go:build tools

// Package devcluster pins the control-plane commands it builds, so `go mod tidy`
// keeps k8s.io/kubernetes and its staging modules in this module's graph.
package devcluster

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
