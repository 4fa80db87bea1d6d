package kube

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/rest"
)

// Every ready address of the https port, once, sorted; not-ready endpoints
// and FQDN slices are left out; IPv6 addresses are bracketed.
func TestInstanceAddresses(t *testing.T) {
	https, metrics := "https", "metrics"
	p6443, p9090 := int32(6443), int32(9090)
	yes, no := true, false
	slices4 := []discoveryv1.EndpointSlice{
		{AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{{Name: &metrics, Port: &p9090}, {Name: &https, Port: &p6443}},
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.0.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: &yes}},
				{Addresses: []string{"10.0.0.2"}},
				{Addresses: []string{"10.0.0.9"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}},
				{Addresses: []string{"10.0.0.3"}},
			}},
		{AddressType: discoveryv1.AddressTypeIPv6,
			Ports:     []discoveryv1.EndpointPort{{Port: &p6443}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"fd00::2"}}}},
		{AddressType: discoveryv1.AddressTypeFQDN,
			Ports:     []discoveryv1.EndpointPort{{Name: &https, Port: &p6443}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"api.example.com"}}}},
	}
	got := instanceAddresses(slices4)
	want := []string{"10.0.0.2:6443", "10.0.0.3:6443", "[fd00::2]:6443"}
	if !slices.Equal(got, want) {
		t.Errorf("instanceAddresses = %v, want %v", got, want)
	}
}

// Only the API server's own slice is read: named kubernetes, labelled for
// the Service, managed by nobody. A slice that merely carries the label (an
// attacker's, or a controller's) is never the one whose addresses are sent
// the console's credentials.
func TestAPIServerSlice(t *testing.T) {
	own := func(name string, labels map[string]string) discoveryv1.EndpointSlice {
		s := discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}
		s.Name, s.Namespace, s.Labels = name, "default", labels
		return s
	}
	label := map[string]string{discoveryv1.LabelServiceName: "kubernetes"}
	impostor := own("kubernetes-extra", label)
	real := own("kubernetes", label)
	got, err := apiServerSlice([]discoveryv1.EndpointSlice{impostor, real})
	if err != nil || got.Name != "kubernetes" {
		t.Errorf("with the real slice: %s, %v", got.Name, err)
	}
	for _, items := range [][]discoveryv1.EndpointSlice{
		{impostor},
		{own("kubernetes", map[string]string{discoveryv1.LabelServiceName: "kubernetes", discoveryv1.LabelManagedBy: "someone"})},
		{own("kubernetes", nil)},
	} {
		if got, err := apiServerSlice(items); err == nil {
			t.Errorf("%s %v read as the API server's", got.Name, got.Labels)
		}
	}
}

// With a kubeconfig that skips TLS verification the instances' list asks
// nothing at all: no list of EndpointSlices, no request to any address.
func TestAPIServerInstancesInsecure(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, BearerToken: "console-token", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	list, err := APIServerInstances(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := list(t.Context()); !errors.Is(err, ErrInstancesInsecure) || len(got) != 0 {
		t.Errorf("list = %v, %v; want ErrInstancesInsecure", got, err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests made with an insecure kubeconfig", n)
	}
}
