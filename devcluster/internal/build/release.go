package build

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Release is one Kubernetes version devcluster can build and run: where its
// build module is, which commands it builds, and where the binaries go.
type Release struct {
	Version string // the gitVersion stamped into the binaries: "v1.36.3"
	Minor   string // "36"
	// Module is the build module's directory relative to devcluster's go.mod:
	// "." for the default release, compat/v1.28 for the old one.
	Module string
	// BinSubdir is the binaries' directory under --bin-dir: "" for the default
	// release, so existing callers find kube-apiserver where they always did.
	BinSubdir string
	Commands  []string
	// AuthenticationConfig tells whether kube-apiserver takes
	// --authentication-config (structured authentication: alpha in 1.29,
	// beta in 1.30, GA in 1.34), which devcluster's OpenID provider needs.
	AuthenticationConfig bool
}

// Default is the release devcluster's own go.mod pins.
var Default = Release{
	Version:              KubeVersion,
	Minor:                "36",
	Module:               ".",
	Commands:             Commands,
	AuthenticationConfig: true,
}

// Releases are the versions `devcluster build --version` and
// `devcluster up --apiserver-version` accept, by their "1.MINOR" name.
var Releases = map[string]Release{
	"1.36": Default,
	// Kubernetes 1.28 is the newest release that serves flowcontrol.apiserver.k8s.io
	// v1beta3 (and v1beta2) but not v1, so the console's v1beta3 path meets a real
	// server. Only kube-apiserver: it maintains the mandatory and suggested
	// FlowSchemas itself, and a 1.36 controller manager must not talk to an older
	// apiserver (version skew policy), so CSRs stay unissued on this cluster.
	"1.28": {
		Version:   "v1.28.15",
		Minor:     "28",
		Module:    filepath.Join("compat", "v1.28"),
		BinSubdir: "v1.28",
		Commands:  []string{"kube-apiserver"},
		// It builds with today's Go as it is: no -checklinkname=0 is needed
		// (the linkname pulls of its old github.com/modern-go/reflect2 v1.0.2
		// are on the linker's allow list), and go.mod's "go 1.20" keeps that
		// release's language semantics and GODEBUG defaults.
	},
}

// LookupRelease returns the release named "1.MINOR" (a leading "v" and a patch
// level are accepted: "v1.28.15" names 1.28).
func LookupRelease(name string) (Release, error) {
	key := strings.TrimPrefix(name, "v")
	if parts := strings.Split(key, "."); len(parts) == 3 {
		key = parts[0] + "." + parts[1]
	}
	r, ok := Releases[key]
	if !ok {
		return Release{}, fmt.Errorf("unknown Kubernetes version %q: devcluster builds %s", name, strings.Join(ReleaseNames(), ", "))
	}
	return r, nil
}

// ReleaseNames lists the accepted version names, newest first.
func ReleaseNames() []string {
	var names []string
	for n := range Releases {
		names = append(names, n)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	return names
}

// BinDir is where the release's binaries live under binDir.
func (r Release) BinDir(binDir string) string {
	return filepath.Join(binDir, r.BinSubdir)
}

// ldflags make /version and discovery truthful, and the user agents in the
// audit log name the real version; the defaults in both version packages are
// placeholders that release builds fill in the same way.
func (r Release) ldflags() string {
	flags := []string{
		"-X k8s.io/component-base/version.gitVersion=" + r.Version,
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=" + r.Minor,
		"-X k8s.io/client-go/pkg/version.gitVersion=" + r.Version,
		"-X k8s.io/client-go/pkg/version.gitMajor=1",
		"-X k8s.io/client-go/pkg/version.gitMinor=" + r.Minor,
	}
	return strings.Join(flags, " ")
}
