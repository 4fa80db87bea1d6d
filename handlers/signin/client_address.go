package signin

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddress is the address a request comes from, for the sign-in limit.
// It is the TCP peer's, unless the peer is one of trusted (the balancers and
// Ingress controllers in front of the console): then X-Forwarded-For is read
// from right to left, each trusted address is skipped, and the first one that
// is not trusted is the client. Only the entries to the right of it were
// written by trusted hops; anything to its left the client wrote itself, so
// reading from the left would let a client pick its own address.
//
// An entry that does not parse as an address (a hop wrote "unknown", or
// nonsense the client sent that a trusted hop passed on) stops the walk: the
// client is then the trusted hop that passed it on, the nearest thing known.
// With every entry trusted, the client is the leftmost, the furthest hop.
//
// Not echo's ExtractIPFromXFFHeader, which walks the same way but differs
// where it matters here: it trusts loopback, link-local and private ranges
// unless each is switched off, and on any entry it cannot parse (such as
// "203.0.113.9:4711", which some balancers write) it answers the TCP peer,
// the balancer, putting every client behind it back on one budget.
func clientAddress(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := peerAddress(r)
	if !peer.IsValid() || !isTrusted(peer, trusted) {
		return peer
	}
	hops := forwardedFor(r.Header)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		addr, ok := parseHop(hops[i])
		if !ok {
			return client
		}
		client = addr
		if !isTrusted(addr, trusted) {
			return addr
		}
	}
	return client
}

// peerAddress is the TCP peer's address (IPv4-mapped IPv6 as IPv4), or the
// zero Addr when RemoteAddr is not an address.
func peerAddress(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return addr.Unmap()
}

// forwardedFor is every X-Forwarded-For entry in order, across repeated
// header lines (a hop may add a line instead of appending to the last one).
func forwardedFor(h http.Header) []string {
	var hops []string
	for _, line := range h.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(line, ",")...)
	}
	return hops
}

// parseHop reads one X-Forwarded-For entry: an address, or an address with a
// port ("203.0.113.9:4711", "[2001:db8::1]:4711"), as balancers write them.
// An IPv6 zone is refused: it names an interface of the writer, not a host.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		addr = ap.Addr()
	}
	if addr.Zone() != "" {
		return netip.Addr{}, false
	}
	return addr.Unmap(), true
}

func isTrusted(addr netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
