package static

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

func TestEmbedHoldsOnlyAssetsAndDist(t *testing.T) {
	entries, err := fs.ReadDir(embedded, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "assets" && e.Name() != "dist" {
			t.Errorf("the embed glob picked up %q: rename it so it starts with neither \"a\" nor \"d\"", e.Name())
		}
	}
}

func TestFaviconIsServedFlat(t *testing.T) {
	b, err := fs.ReadFile(FS, "favicon.svg")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<svg") {
		t.Errorf("favicon.svg does not look like SVG: %.40q", b)
	}
	if _, err := FS.Open("assets/favicon.svg"); err == nil {
		t.Error("layer directories must not be visible under their own names")
	}
}

func TestOverlayRejectsInvalidPaths(t *testing.T) {
	for _, name := range []string{"../embed.go", "/favicon.svg", "dist/../assets"} {
		if _, err := FS.Open(name); err == nil {
			t.Errorf("Open(%q) succeeded", name)
		}
	}
}

func TestAssetPath(t *testing.T) {
	versioned := regexp.MustCompile(`^/static/favicon\.svg\?v=[0-9a-f]{12}$`)
	if got := AssetPath("favicon.svg"); !versioned.MatchString(got) {
		t.Errorf("AssetPath(favicon.svg) = %q", got)
	}
	if got, again := AssetPath("favicon.svg"), AssetPath("favicon.svg"); got != again {
		t.Errorf("AssetPath is not stable: %q then %q", got, again)
	}
	if got := AssetPath("nope.js"); got != "/static/nope.js" {
		t.Errorf("AssetPath(nope.js) = %q", got)
	}
}

func TestCheckMatchesBundle(t *testing.T) {
	missing := false
	for _, name := range Bundle {
		if _, err := fs.Stat(FS, name); err != nil {
			missing = true
		}
	}
	if err := Check(); (err != nil) != missing {
		t.Errorf("Check() = %v, but bundle missing = %v", err, missing)
	}
}
