package viewtest

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// The checker itself must catch what it claims to catch.
func TestCSPViolationsFindsEveryKind(t *testing.T) {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(`<!DOCTYPE html><html><head>
		<script>alert(1)</script><script src="/static/app.js"></script><style>p{}</style></head>
		<body><p style="color:red" onclick="x()">a</p><a href=" JavaScript:alert(1)">x</a>
		<button hx-on:click="x()">b</button><svg onload="x()"></svg></body></html>`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(CSPViolations(doc), "\n")
	for _, want := range []string{"inline <script> without src", "<script> with content", "<style> element", "style attribute on <p>", "onclick attribute", "href=javascript:", "hx-on:click attribute", "onload attribute on <svg>"} {
		if !strings.Contains(got, want) {
			t.Errorf("missed %q in:\n%s", want, got)
		}
	}
	if n := len(CSPViolations(doc)); n != 8 {
		t.Errorf("found %d violations, want 8:\n%s", n, got)
	}
}

func TestCSPViolationsPassesCleanHTML(t *testing.T) {
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(`<html><head><script src="/a.js" defer></script></head><body><a href="/x" data-confirm="ok?">x</a></body></html>`))
	if v := CSPViolations(doc); len(v) != 0 {
		t.Errorf("clean HTML flagged: %v", v)
	}
}
