package handlers

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// List serves the interception simulator's ValidatingAdmissionPolicies and
// bindings: the fixtures hold none.
func (f fixtureCluster) List(id kube.KindID) ([]runtime.Object, error) { return nil, nil }
