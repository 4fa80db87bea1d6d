// Package static holds what the browser downloads: the bundle built by
// `npm run build` into dist/ (app.js, app.css; git-ignored) and the committed
// files in assets/ (favicon.svg). Both are served flat under /static/, dist
// first: /static/app.css is dist/app.css, /static/favicon.svg is assets/favicon.svg.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// Embedding choice: the single glob "[ad]*" matches assets/ (always present,
// committed) and dist/ (present only after `npm run build`). A pattern must
// match at least one file, and "dist" alone would break `go build`, `go vet`
// and gopls in a fresh checkout for everyone who does not touch the front end.
// So compilation never needs Node, and a binary built without the bundle is
// caught at start-up instead: main calls Check, which fails when app.js or
// app.css is missing. The Makefile still runs `npm run build` before `go build`.
// Keep other files in this directory from starting with "a" or "d"
// (TestEmbedHoldsOnlyAssetsAndDist guards this).
//
//go:embed [ad]*
var embedded embed.FS

// Bundle names the files `npm run build` writes into dist/.
var Bundle = []string{"app.js", "app.css", "theme.js"}

// FS serves dist/ and assets/ as one flat tree; a name in dist wins.
var FS fs.FS = overlay{mustSub("dist"), mustSub("assets")}

// Prefix is the URL path under which FS is served.
const Prefix = "/static/"

// Check reports an error when the front-end bundle was not built into the binary.
func Check() error {
	var errs []error
	for _, name := range Bundle {
		if _, err := fs.Stat(FS, name); err != nil {
			errs = append(errs, fmt.Errorf("static/dist/%s is missing: run `npm ci && npm run build` before `go build`", name))
		}
	}
	return errors.Join(errs...)
}

var (
	hashesOnce sync.Once
	hashes     map[string]string
)

// AssetPath returns the URL of a file in FS with a content hash for cache
// busting, e.g. "/static/app.css?v=3f2a9c0d1e4b" (the first 12 hex digits of
// the SHA-256 of the content, computed once per process). A missing file gets
// its plain URL, so a page still renders; Check reports the problem.
func AssetPath(name string) string {
	hashesOnce.Do(computeHashes)
	if h, ok := hashes[name]; ok {
		return Prefix + name + "?v=" + h
	}
	return Prefix + name
}

// Version returns the content hash AssetPath puts in name's URL, and false
// for a name FS does not hold.
func Version(name string) (string, bool) {
	hashesOnce.Do(computeHashes)
	h, ok := hashes[name]
	return h, ok
}

// CacheControl is the Cache-Control of a response serving name at a URL whose
// ?v= is version. A URL naming the file's current content hash (the one the
// pages link, AssetPath) never changes meaning, so the browser keeps it a year
// without asking again; any other URL of a file (no version, an old one from
// a page rendered before a deployment) must be revalidated, by its ETag.
func CacheControl(name, version string) string {
	if h, ok := Version(name); ok && version == h {
		return "public, max-age=31536000, immutable"
	}
	return "no-cache"
}

func computeHashes() {
	hashes = map[string]string{}
	_ = fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(FS, p)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		hashes[p] = hex.EncodeToString(sum[:])[:12]
		return nil
	})
}

// mustSub returns the embedded directory dir, or an empty FS when it was not
// embedded (dist/ before the first `npm run build`).
func mustSub(dir string) fs.FS {
	if _, err := fs.Stat(embedded, dir); err != nil {
		return emptyFS{}
	}
	sub, err := fs.Sub(embedded, dir)
	if err != nil {
		panic(err) // only on an invalid dir name, a programming error
	}
	return sub
}

// overlay opens a name from the first layer that has it. Directory listings
// are not merged: the static route serves files, never indexes.
type overlay []fs.FS

func (o overlay) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	for _, layer := range o {
		f, err := layer.Open(name)
		if err == nil {
			return f, nil
		}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadDir merges the layers' entries so fs.WalkDir sees every file once.
func (o overlay) ReadDir(name string) ([]fs.DirEntry, error) {
	seen := map[string]bool{}
	var out []fs.DirEntry
	found := false
	for _, layer := range o {
		entries, err := fs.ReadDir(layer, name)
		if err != nil {
			continue
		}
		found = true
		for _, e := range entries {
			if !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e)
			}
		}
	}
	if !found {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
