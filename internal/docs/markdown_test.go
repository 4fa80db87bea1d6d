package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// hostile are descriptions that try to get script into the page.
var hostile = []string{
	"<script>alert(1)</script>",
	"<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
	"text <img src=x onerror=alert(1)> more",
	"<a href=\"javascript:alert(1)\">x</a>",
	"<div onmouseover=\"alert(1)\">hover</div>",
	"<svg><script>alert(1)</script></svg>",
	"<iframe src=\"javascript:alert(1)\"></iframe>",
	"[click me](javascript:alert(document.domain))",
	"[click me](javascript&colon;alert(document.domain))",
	"[click me](JaVaScRiPt:alert(1))",
	"[click me](&#106;avascript:alert(1))",
	"[click me](&#x6A;avascript:alert(1))",
	"[click me](java&#x09;script:alert(1))",
	"[click me](javascript&#58;alert(1))",
	"[click me](%6Aavascript:alert(1))",
	"[click me](  javascript:alert(1)  )",
	"[click me](<javascript:alert(1)>)",
	"<javascript:alert(1)>",
	"[ref]\n\n[ref]: javascript:alert(1)",
	"[ref]\n\n[ref]: javascript&colon;alert(1) \"title\"",
	"![img](javascript:alert(1))",
	"![img](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
	"[x](data:text/html,<script>alert(1)</script>)",
	"[x](vbscript:msgbox(1))",
	"[x](file:///etc/passwd)",
	"[x](\"onclick=alert(1))",
	"[x](https://example.com \"title\\\" onclick=\\\"alert(1)\")",
	"`<script>alert(1)</script>`",
	"```\n<script>alert(1)</script>\n```",
	"    <script>indented code</script>",
	"<!-- comment --><script>alert(1)</script>",
	"<style>body{display:none}</style>",
	"*emph* <b onclick=alert(1)>bold</b>",
	"<details open ontoggle=alert(1)>",
	"[a](https://example.com)<a href='javascript:alert(1)'>b</a>",
}

var dangerousURL = regexp.MustCompile(`^(javascript|vbscript|data|file):`)

// checkSafe parses out and fails on any <script>, <style>, iframe, on*=
// attribute, style attribute, or javascript:/vbscript:/data: URL.
func checkSafe(t *testing.T, in, out string) {
	t.Helper()
	if strings.Contains(strings.ToLower(out), "<script") {
		t.Errorf("%q → %q: contains <script", in, out)
	}
	doc, err := xhtml.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatalf("parse %q: %v", out, err)
	}
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			switch n.Data {
			case "script", "style", "iframe", "object", "embed", "svg", "details":
				t.Errorf("%q → %q: element <%s>", in, out, n.Data)
			}
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				val := strings.ToLower(strings.Join(strings.Fields(a.Val), ""))
				if strings.HasPrefix(key, "on") || key == "style" {
					t.Errorf("%q → %q: attribute %s", in, out, a.Key)
				}
				if (key == "href" || key == "src") && dangerousURL.MatchString(val) {
					t.Errorf("%q → %q: dangerous URL %s=%q", in, out, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

func TestMarkdownNeverEmitsScript(t *testing.T) {
	for _, in := range hostile {
		checkSafe(t, in, Markdown(in))
	}
}

func TestMarkdownRendersOrdinaryText(t *testing.T) {
	cases := map[string]string{
		"":                                   "",
		"Plain text.":                        "<p>Plain text.</p>\n",
		"Use `kubectl` *carefully*.":         "<p>Use <code>kubectl</code> <em>carefully</em>.</p>\n",
		"[docs](https://kubernetes.io/docs)": `<p><a href="https://kubernetes.io/docs">docs</a></p>` + "\n",
		"a < b && c > d":                     "<p>a &lt; b &amp;&amp; c &gt; d</p>\n",
	}
	for in, want := range cases {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
	// The dangerous link keeps its text but loses its target.
	if got := Markdown("[click me](javascript&colon;alert(document.domain))"); !strings.Contains(got, "click me") || strings.Contains(got, "alert") && strings.Contains(got, "href=\"j") {
		t.Errorf("entity-encoded javascript link: %q", got)
	}
}

// TestMarkdownOnRealDescriptions renders every distinct description of every
// real-world CRD fixture and of the demo seed (which holds a hostile one).
func TestMarkdownOnRealDescriptions(t *testing.T) {
	files, err := filepath.Glob("../../../shared/fixtures/real/customresourcedefinitions/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRD fixtures in ../shared (is it beside the repository?): %v", err)
	}
	files = append(files, "../../devcluster/internal/seed/demo/crds.yaml")
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal([]byte(doc), &crd); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, v := range crd.Spec.Versions {
				if v.Schema != nil {
					descriptions(v.Schema.OpenAPIV3Schema, seen)
				}
			}
		}
	}
	if len(seen) < 1000 || !seen[demoHostile] {
		t.Fatalf("%d distinct descriptions; demo hostile one found: %v", len(seen), seen[demoHostile])
	}
	for d := range seen {
		checkSafe(t, d, Markdown(d))
	}
}

// demoHostile is the description in the demo seed with an entity-encoded
// javascript: link.
const demoHostile = "Color of the widget. One of `red`, `green`, `blue`.\nA link that a safe Markdown renderer must neutralise:\n[click me](javascript&colon;alert(document.domain)).\n"

func descriptions(s *apiextensionsv1.JSONSchemaProps, into map[string]bool) {
	if s == nil {
		return
	}
	if s.Description != "" {
		into[s.Description] = true
	}
	for _, p := range s.Properties {
		descriptions(&p, into)
	}
	if s.Items != nil {
		descriptions(s.Items.Schema, into)
	}
	if s.AdditionalProperties != nil {
		descriptions(s.AdditionalProperties.Schema, into)
	}
}
