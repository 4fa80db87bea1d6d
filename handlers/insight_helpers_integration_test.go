//go:build integration

package handlers

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

func mustLookup(t *testing.T, cfg *rest.Config) *kube.Lookup {
	t.Helper()
	l, err := kube.NewLookup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
