package kube

import (
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
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
