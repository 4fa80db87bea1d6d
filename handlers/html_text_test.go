package handlers

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// htmlText is the text a browser shows for an HTML fragment (a live row):
// markup such as BreakHints' <wbr> between the characters does not count.
func htmlText(t testing.TB, fragment string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(fragment))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Text()
}
