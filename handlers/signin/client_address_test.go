package signin

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestClientAddressBehindTrustedProxies: X-Forwarded-For is read only from a
// trusted peer, right to left past trusted hops, so the entries a client
// wrote itself (on the left) are never taken while a trusted hop named it.
func TestClientAddressBehindTrustedProxies(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("fd00::/8")}
	for _, tt := range []struct {
		name   string
		remote string
		xff    []string // header lines
		want   string
	}{
		{"untrusted peer: its header is ignored", "203.0.113.9:1", []string{"198.51.100.1"}, "203.0.113.9"},
		{"trusted peer without the header", "10.1.2.3:1", nil, "10.1.2.3"},
		{"the client the proxy names", "10.1.2.3:1", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a client's own entries are left of its address", "10.1.2.3:1", []string{"1.1.1.1, 2.2.2.2, 198.51.100.1"}, "198.51.100.1"},
		{"trusted hops are skipped", "127.0.0.1:1", []string{"6.6.6.6, 198.51.100.1, 10.9.9.9,10.8.8.8"}, "198.51.100.1"},
		{"hops on repeated lines", "127.0.0.1:1", []string{"6.6.6.6, 198.51.100.1", "10.9.9.9"}, "198.51.100.1"},
		{"a port after the address", "10.1.2.3:1", []string{"198.51.100.1:4711"}, "198.51.100.1"},
		{"IPv6 with and without brackets", "[fd00::1]:1", []string{"2001:db8::7", "[2001:db8::8]:4711"}, "2001:db8::8"},
		{"IPv4-mapped IPv6", "[::ffff:10.1.2.3]:1", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"garbage stops at the hop that passed it", "127.0.0.1:1", []string{"198.51.100.1, unknown, 10.4.4.4"}, "10.4.4.4"},
		{"garbage from the proxy itself", "10.1.2.3:1", []string{"unknown"}, "10.1.2.3"},
		{"a zone is no host", "10.1.2.3:1", []string{"fe80::1%eth0"}, "10.1.2.3"},
		{"every hop trusted: the furthest", "127.0.0.1:1", []string{"10.1.1.1, 10.2.2.2"}, "10.1.1.1"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		r.RemoteAddr = tt.remote
		for _, line := range tt.xff {
			r.Header.Add("X-Forwarded-For", line)
		}
		if got := clientAddress(r, trusted); got != netip.MustParseAddr(tt.want) {
			t.Errorf("%s: clientAddress(%s, %q) = %s, want %s", tt.name, tt.remote, tt.xff, got, tt.want)
		}
	}
}

// TestClientAddressAgreesWithEcho: where echo's ExtractIPFromXFFHeader, told
// to trust exactly the same ranges, can read every entry, it finds the same
// client (clientAddress says why it is not used).
func TestClientAddressAgreesWithEcho(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		opts = append(opts, echo.TrustIPRange(prefixNet(p)))
	}
	extract := echo.ExtractIPFromXFFHeader(opts...)
	for _, tt := range []struct{ remote, xff string }{
		{"203.0.113.9:1", "198.51.100.1"},
		{"10.1.2.3:1", "1.1.1.1, 198.51.100.1"},
		{"127.0.0.1:1", "6.6.6.6, 198.51.100.1, 10.9.9.9, 10.8.8.8"},
		{"127.0.0.1:1", "10.1.1.1, 10.2.2.2"},
		{"127.0.0.2:1", "198.51.100.1"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		r.RemoteAddr = tt.remote
		r.Header.Set("X-Forwarded-For", tt.xff)
		if got, want := clientAddress(r, trusted).String(), extract(r); got != want {
			t.Errorf("%s with %q: %s, echo %s", tt.remote, tt.xff, got, want)
		}
	}
}

func prefixNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
