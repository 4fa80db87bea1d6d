package build

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLookupRelease(t *testing.T) {
	tests := []struct {
		name, want, wantErr string
	}{
		{"1.36", "v1.36.3", ""},
		{"1.28", "v1.28.15", ""},
		{"v1.28", "v1.28.15", ""},
		{"v1.28.15", "v1.28.15", ""},
		{"1.27", "", `unknown Kubernetes version "1.27": devcluster builds 1.36, 1.28`},
		{"", "", "unknown Kubernetes version"},
	}
	for _, tt := range tests {
		r, err := LookupRelease(tt.name)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("LookupRelease(%q) error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || r.Version != tt.want {
			t.Errorf("LookupRelease(%q) = %s, %v; want %s", tt.name, r.Version, err, tt.want)
		}
	}
}

func TestReleaseLayout(t *testing.T) {
	if got := Default.BinDir("/b"); got != "/b" {
		t.Errorf("default release bin dir %s, want /b (where the binaries always were)", got)
	}
	old := Releases["1.28"]
	if got := old.BinDir("/b"); got != filepath.Join("/b", "v1.28") {
		t.Errorf("1.28 bin dir %s", got)
	}
	if !strings.Contains(old.ldflags(), "version.gitVersion=v1.28.15") || !strings.Contains(old.ldflags(), "gitMinor=28") {
		t.Errorf("1.28 ldflags %q do not stamp the version", old.ldflags())
	}
	if Default.ldflags() == old.ldflags() {
		t.Error("both releases share ldflags, so their stamps would too")
	}
}
