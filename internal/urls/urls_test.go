package urls

import (
	"net/url"
	"strings"
	"testing"
)

func TestNamesAreEscapedOncePerSegment(t *testing.T) {
	long := strings.Repeat("a.", 126) + "b" // 253 characters, the longest DNS subdomain
	for _, tc := range []struct{ got, want string }{
		// Dots and dashes stay as they are: a DNS name is its own segment.
		{Object("csidrivers", long), "/csidrivers/" + long},
		{Edit("csidrivers", long), "/csidrivers/" + long + "/edit"},
		{CSRApprove("csr-" + long[:200]), "/csrs/csr-" + long[:200] + "/approve"},
		// A custom resource's name may hold anything but "/" and "%".
		{CRInstance("g.example.com", "", "a b?c#d;e,f"), "/crds/g.example.com/instances/_/a%20b%3Fc%23d;e,f"},
		{CRInstance("g.example.com", "ns", "x"), "/crds/g.example.com/instances/ns/x"},
		// No name holds "/", but one in a link must not reach another route.
		{Object("csrs", "a/b"), "/csrs/a%2Fb"},
		{CRDSchema("g.example.com", "v1", "spec.a b"), "/crds/g.example.com/schema/v1?path=spec.a+b"},
		{CSRGroup("s-0123456789ab", "deny-all"), "/csrs/groups/s-0123456789ab?action=deny-all"},
		{WithQuery(CSRs, nil), "/csrs"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestSegmentRoundTrips(t *testing.T) {
	for _, name := range []string{"plain", "a b", "a?b", "a#b", "a;b", "a,b", "a:b", "a@b+c=d&e$f", "ü.example", strings.Repeat("x", 253)} {
		u, err := url.Parse(Object("widgets", name))
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		// Go keeps no raw path when its own encoding matches: routers then
		// match and hand out the decoded path, which must be the name.
		if u.RawPath != "" || u.Path != "/widgets/"+name {
			t.Errorf("%q: path %q raw %q", name, u.Path, u.RawPath)
		}
	}
}
