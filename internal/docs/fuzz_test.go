package docs

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
	"sigs.k8s.io/yaml"
)

// fuzzHostile are seeds that try to get script into the page by every route
// Markdown offers: raw HTML, link and image destinations, references,
// autolinks, entities.
var fuzzHostile = []string{
	"<script>alert(1)</script>",
	"<img src=x onerror=alert(1)>",
	"<a href=\"javascript:alert(1)\" onclick=\"x()\">x</a>",
	"[x](javascript:alert(1))",
	"[x](javascript&colon;alert(1))",
	"[x](&#106;avascript:alert(1))",
	"[x](java\tscript:alert(1))",
	"[x](<javascript:alert(1)>)",
	"<javascript:alert(1)>",
	"[r]\n\n[r]: javascript:alert(1) \"t\"",
	"![i](javascript:alert(1))",
	"[x](https://example.com \"t\\\" onclick=\\\"alert(1)\")",
	"<!-- c --><script>alert(1)</script>",
	"<details open ontoggle=alert(1)>",
	"`<script>` and <scr<script>ipt>",
	"    <script>indented</script>",
	"* [a](vbscript:msgbox(1))\n* <svg onload=alert(1)>",
	"<div\nonmouseover=alert(1)>x</div>",
}

// fuzzFixturesDir is the shared real-world manifests beside the repository.
const fuzzFixturesDir = "../../../shared/fixtures/real"

// fuzzSeedFileMax skips the few multi-MiB fixtures (argo-workflows' "full"
// CRDs repeat the descriptions of smaller ones): every fuzz worker reads the
// seeds again, and a slow start eats a short fuzz run.
const fuzzSeedFileMax = 512 << 10

// fuzzSeedMax bounds the real descriptions used as seeds, so that a short
// fuzz run gets past measuring their coverage.
const fuzzSeedMax = 200

// fuzzRealDescriptions returns distinct descriptions of the real-world CRD
// fixtures that use Markdown or HTML syntax (links, code, emphasis, tags,
// entities): at most fuzzSeedMax, spread evenly over their sorted order. The
// plain-prose majority adds nothing a fuzzer can use.
func fuzzRealDescriptions(f *testing.F) []string {
	files, err := filepath.Glob(filepath.Join(fuzzFixturesDir, "customresourcedefinitions", "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no CRD fixtures in %s (is ../shared beside the repository?): %v", fuzzFixturesDir, err)
	}
	markup := regexp.MustCompile("[\\[`<*&_]|\\]\\(|https?://")
	seen := map[string]bool{}
	for _, file := range files {
		if st, err := os.Stat(file); err != nil || st.Size() > fuzzSeedFileMax {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var obj any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		collectDescriptions(obj, func(d string) {
			if markup.MatchString(d) {
				seen[d] = true
			}
		})
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	if len(out) <= fuzzSeedMax {
		return out
	}
	picked := make([]string, 0, fuzzSeedMax)
	for i := range fuzzSeedMax {
		picked = append(picked, out[i*len(out)/fuzzSeedMax])
	}
	return picked
}

// collectDescriptions calls fn with every string under a "description" key.
func collectDescriptions(v any, fn func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if s, ok := c.(string); ok && k == "description" {
				fn(s)
				continue
			}
			collectDescriptions(c, fn)
		}
	case []any:
		for _, c := range v {
			collectDescriptions(c, fn)
		}
	}
}

// FuzzMarkdown renders arbitrary text and fails on anything that could run
// script in the page: a <script anywhere in the output, an on* attribute, or
// a javascript:/vbscript: URL in any attribute, however it is encoded.
func FuzzMarkdown(f *testing.F) {
	for _, s := range fuzzHostile {
		f.Add(s)
	}
	real := fuzzRealDescriptions(f)
	if len(real) < 100 {
		f.Fatalf("only %d real descriptions with markup: the fixtures are not what this test expects", len(real))
	}
	for _, s := range real {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out := Markdown(src)
		if problem := unsafeHTML(out); problem != "" {
			t.Fatalf("Markdown(%q) = %q: %s", src, out, problem)
		}
	})
}

// unsafeHTML returns what makes html unsafe, or "". It reads the HTML as a
// browser's tokenizer does (entities decoded), then normalises URLs as
// browsers do before looking at the scheme (ASCII whitespace and control
// characters dropped, case folded).
func unsafeHTML(html string) string {
	if strings.Contains(strings.ToLower(html), "<script") {
		return "contains <script"
	}
	z := xhtml.NewTokenizer(strings.NewReader(html))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			if z.Err() == io.EOF {
				return ""
			}
			return "tokenizer: " + z.Err().Error()
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken, xhtml.EndTagToken:
			tok := z.Token()
			if strings.EqualFold(tok.Data, "script") {
				return "a script element"
			}
			for _, a := range tok.Attr {
				key := strings.ToLower(a.Key)
				if strings.HasPrefix(key, "on") {
					return "event handler attribute " + a.Key
				}
				if scheme := urlScheme(a.Val); scheme == "javascript" || scheme == "vbscript" {
					return "attribute " + a.Key + " holds a " + scheme + ": URL"
				}
			}
		}
	}
}

// urlScheme is the scheme a browser would see in an attribute value.
func urlScheme(v string) string {
	clean := strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, v)
	scheme, _, found := strings.Cut(strings.ToLower(clean), ":")
	if !found {
		return ""
	}
	return scheme
}
