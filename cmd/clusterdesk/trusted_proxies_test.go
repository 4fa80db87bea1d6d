package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestTrustedProxiesFlag: CIDRs and single addresses, from the flag or the
// environment; a range covering every address, and anything that is not an
// address, refused with the flag's name.
func TestTrustedProxiesFlag(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil || len(cfg.trustedProxies) != 0 {
		t.Fatalf("default: %v %v, want none", cfg.trustedProxies, err)
	}
	cfg, err = parseFlags([]string{"--trusted-proxies", " 10.0.0.0/8, 127.0.0.1/32,192.168.7.9,fd00::/8,10.1.2.3/16,::ffff:172.16.0.0/108"})
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("192.168.7.9/32"),
		netip.MustParsePrefix("fd00::/8"), netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("172.16.0.0/12"),
	}
	if err != nil || !slices.Equal(cfg.trustedProxies, want) {
		t.Fatalf("parsed %v %v, want %v", cfg.trustedProxies, err, want)
	}
	for _, bad := range []string{"0.0.0.0/0", "::/0", "10.0.0.0/33", "proxy.local", "fe80::1%eth0", "10.0.0.0/8,*"} {
		if _, err := parseFlags([]string{"--trusted-proxies", bad}); err == nil || !strings.Contains(err.Error(), "--trusted-proxies") {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
	t.Setenv("CLUSTERDESK_TRUSTED_PROXIES", "10.0.0.0/8")
	if cfg, err := parseFlags(nil); err != nil || !slices.Equal(cfg.trustedProxies, want[:1]) {
		t.Errorf("from CLUSTERDESK_TRUSTED_PROXIES: %v %v", cfg.trustedProxies, err)
	}
	t.Setenv("CLUSTERDESK_TRUSTED_PROXIES", "everyone")
	if _, err := parseFlags(nil); err == nil {
		t.Error("a bad CLUSTERDESK_TRUSTED_PROXIES was accepted")
	}
}
