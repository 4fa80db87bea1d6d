package plane

import (
	"context"
	"encoding/json"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Where kube-apiserver keeps the "kubernetes" Service's endpoints in etcd
// (the default --etcd-prefix /registry, resources named as in the API).
const (
	kubernetesEndpointSliceKey = "/registry/endpointslices/default/kubernetes"
	kubernetesEndpointsKey     = "/registry/services/endpoints/default/kubernetes"
)

// Putter writes one key of etcd (the embedded etcd's Put).
type Putter func(ctx context.Context, key, value string) error

// WriteKubernetesEndpoints lists the instances at ips, all serving on port,
// in the default/kubernetes EndpointSlice and Endpoints, the shape kube-apiserver's
// lease reconciler writes on a real cluster (pkg/controlplane/reconcilers/
// endpointsadapter.go: slice named after the Service, one "https" port, every
// instance ready). It writes them straight into etcd because the API refuses
// loopback addresses there; kube-apiserver stores JSON as well as it reads
// protobuf (its storage codec falls back to the universal deserializer), and
// its watch cache sees the write like any other.
//
// An instance stopped on purpose stays listed, as a crashed instance stays
// listed on a real cluster until its lease expires: that is the case a console
// must show as unreachable.
func WriteKubernetesEndpoints(ctx context.Context, put Putter, ips []net.IP, port int) error {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	portName, protocol, port32, ready := "https", corev1.ProtocolTCP, int32(port), true
	slice := discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "kubernetes", Namespace: "default",
			UID:               types.UID("6b1c4a9e-d0c1-4b5e-8a1e-000000000001"),
			CreationTimestamp: now,
			Labels:            map[string]string{discoveryv1.LabelServiceName: "kubernetes"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Protocol: &protocol, Port: &port32}},
	}
	endpoints := corev1.Endpoints{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "kubernetes", Namespace: "default",
			UID:               types.UID("6b1c4a9e-d0c1-4b5e-8a1e-000000000002"),
			CreationTimestamp: now,
			// As the reconciler marks it: the slice above is the one to read,
			// the EndpointSlice mirroring controller must not make another.
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"},
		},
		Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Name: portName, Port: port32, Protocol: protocol}}}},
	}
	for _, ip := range ips {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{ip.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		})
		endpoints.Subsets[0].Addresses = append(endpoints.Subsets[0].Addresses, corev1.EndpointAddress{IP: ip.String()})
	}
	for key, obj := range map[string]any{kubernetesEndpointSliceKey: slice, kubernetesEndpointsKey: endpoints} {
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		if err := put(ctx, key, string(data)); err != nil {
			return err
		}
	}
	return nil
}
