package csr

import (
	"slices"
	"testing"
)

func TestSignerAuthzNames(t *testing.T) {
	for _, tc := range []struct {
		signer string
		want   []string
	}{
		{"kubernetes.io/kube-apiserver-client", []string{"kubernetes.io/kube-apiserver-client", "kubernetes.io/*"}},
		{"example.com/team/deep", []string{"example.com/team/deep", "example.com/*"}},
		{"example.com/*", []string{"example.com/*"}},
		// Not a valid signer name (the API server requires a path), but
		// upstream still asks for "<name>/*"; so does this.
		{"nodomain", []string{"nodomain", "nodomain/*"}},
	} {
		if got := SignerAuthzNames(tc.signer); !slices.Equal(got, tc.want) {
			t.Errorf("SignerAuthzNames(%q) = %q, want %q", tc.signer, got, tc.want)
		}
	}
}
