// Package viewtest renders templ components for tests and checks the HTML
// against the rules the strict Content-Security-Policy imposes.
package viewtest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"golang.org/x/net/html"

	"github.com/clusterdesk/clusterdesk/views/internal/samples"
)

// XSS is placed into model strings; it must come out as text.
const XSS = samples.XSS

// Render renders c and parses the result. It fails the test on a render error.
func Render(t testing.TB, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	raw := buf.String()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc, raw
}

// One returns the single element matching sel, failing the test unless there
// is exactly one.
func One(t testing.TB, doc *goquery.Document, sel string) *goquery.Selection {
	t.Helper()
	s := doc.Find(sel)
	if s.Length() != 1 {
		t.Fatalf("%s: found %d elements, want 1", sel, s.Length())
	}
	return s
}

// TestID is a selector for data-testid=id.
func TestID(id string) string { return `[data-testid="` + id + `"]` }

// Text is the whitespace-collapsed text of s.
func Text(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

// CSPViolations walks every node and lists what the strict CSP would block or
// what would run script: <script> without src or with content, <style>,
// style= attributes, on*= handlers, hx-on attributes, javascript: URLs.
func CSPViolations(doc *goquery.Document) []string {
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script":
				if attr(n, "src") == "" {
					out = append(out, "inline <script> without src")
				}
				if n.FirstChild != nil && strings.TrimSpace(n.FirstChild.Data) != "" {
					out = append(out, "<script> with content: "+n.FirstChild.Data)
				}
			case "style":
				out = append(out, "<style> element")
			}
			for _, a := range n.Attr {
				name := strings.ToLower(a.Key)
				switch {
				case name == "style":
					out = append(out, "style attribute on <"+n.Data+">")
				case strings.HasPrefix(name, "on"):
					out = append(out, name+" attribute on <"+n.Data+">")
				case strings.HasPrefix(name, "hx-on"), strings.HasPrefix(name, "data-hx-on"):
					out = append(out, name+" attribute on <"+n.Data+">")
				case name == "href" || name == "action" || name == "src" || name == "formaction" || strings.HasPrefix(name, "hx-get") || strings.HasPrefix(name, "hx-post"):
					if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
						out = append(out, name+"=javascript: on <"+n.Data+">")
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range doc.Nodes {
		walk(n)
	}
	return out
}

// AssertCSPSafe fails the test for every CSP violation in doc.
func AssertCSPSafe(t testing.TB, doc *goquery.Document) {
	t.Helper()
	for _, v := range CSPViolations(doc) {
		t.Error(v)
	}
}

// AssertEscaped checks that XSS appears only as text: the raw HTML holds the
// escaped form and no <script> element carries it.
func AssertEscaped(t testing.TB, doc *goquery.Document, raw string) {
	t.Helper()
	if strings.Contains(raw, XSS) {
		t.Errorf("raw HTML contains the unescaped payload %q", XSS)
	}
	doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Text(), "alert(1)") {
			t.Errorf("a <script> element carries the payload")
		}
	})
	if !strings.Contains(doc.Text(), XSS) {
		t.Errorf("the payload should be visible as text, but is missing")
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
