package plane

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// The slice lists every instance, ready, under the one port, in the shape
// the API server's lease reconciler writes.
func TestWriteKubernetesEndpointsListsEveryInstance(t *testing.T) {
	written := map[string]string{}
	put := func(_ context.Context, key, value string) error { written[key] = value; return nil }
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2)}
	if err := WriteKubernetesEndpoints(context.Background(), put, ips, 6443); err != nil {
		t.Fatal(err)
	}
	var slice discoveryv1.EndpointSlice
	if err := json.Unmarshal([]byte(written[kubernetesEndpointSliceKey]), &slice); err != nil {
		t.Fatalf("slice: %v", err)
	}
	if slice.Kind != "EndpointSlice" || slice.APIVersion != "discovery.k8s.io/v1" || slice.Labels[discoveryv1.LabelServiceName] != "kubernetes" {
		t.Errorf("slice meta = %+v %+v", slice.TypeMeta, slice.Labels)
	}
	if len(slice.Ports) != 1 || *slice.Ports[0].Port != 6443 || *slice.Ports[0].Name != "https" {
		t.Errorf("ports = %+v", slice.Ports)
	}
	if len(slice.Endpoints) != 2 || slice.Endpoints[1].Addresses[0] != "127.0.0.2" || !*slice.Endpoints[1].Conditions.Ready {
		t.Errorf("endpoints = %+v", slice.Endpoints)
	}
	var eps corev1.Endpoints
	if err := json.Unmarshal([]byte(written[kubernetesEndpointsKey]), &eps); err != nil {
		t.Fatalf("endpoints: %v", err)
	}
	if len(eps.Subsets) != 1 || len(eps.Subsets[0].Addresses) != 2 {
		t.Errorf("endpoints subsets = %+v", eps.Subsets)
	}
}
