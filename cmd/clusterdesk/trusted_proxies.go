package main

import (
	"flag"
	"fmt"
	"net/netip"
	"strings"
)

// registerTrustedProxies adds --trusted-proxies; parseTrustedProxies reads it
// after the flags are parsed.
func registerTrustedProxies(fs *flag.FlagSet) *string {
	return fs.String("trusted-proxies", env("TRUSTED_PROXIES", ""), "the addresses of the balancers or Ingress controllers in front of the console, comma-separated CIDRs or addresses (e.g. 10.0.0.0/8,127.0.0.1/32): from them the sign-in limit takes the client's address from X-Forwarded-For, read right to left past the trusted hops (default: none, the TCP peer is the client)")
}

// parseTrustedProxies reads a comma-separated list of CIDRs or single
// addresses. A range that covers every address is refused: trusting it would
// let any client name its own address in X-Forwarded-For and so pick a fresh
// sign-in budget with each attempt.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			addr, aerr := netip.ParseAddr(f)
			if aerr != nil || addr.Zone() != "" {
				return nil, fmt.Errorf("--trusted-proxies (CLUSTERDESK_TRUSTED_PROXIES): %q is neither a CIDR such as 10.0.0.0/8 nor an address", f)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		// An IPv4-mapped range (::ffff:10.0.0.0/104) is the IPv4 range it maps:
		// client addresses are compared unmapped.
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		if p.Bits() == 0 {
			return nil, fmt.Errorf("--trusted-proxies (CLUSTERDESK_TRUSTED_PROXIES): %s trusts every address, so any client could name its own in X-Forwarded-For; list the proxies' ranges", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
