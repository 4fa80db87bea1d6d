package testcluster

import (
	"net"
	"testing"
)

// NonLoopbackAddress is an IPv4 address of this host that is not loopback:
// the tests of what crosses a network need one (and the API server refuses
// loopback addresses in an EndpointSlice), and fail without it.
func NonLoopbackAddress(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatal("this host has no non-loopback IPv4 address to test a listener beyond loopback")
	return ""
}
