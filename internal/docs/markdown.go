// Package docs renders documentation text written by others (CRD schema
// descriptions, which whoever installed the CRD wrote) into HTML that is safe
// to put into a page as is.
package docs

import (
	"bytes"
	"html"
	"strings"

	"github.com/yuin/goldmark"
)

// md is the one Markdown renderer of the process. It is CommonMark in
// goldmark's default safe mode: raw HTML is replaced by a comment and link or
// image URLs with a dangerous scheme (javascript:, vbscript:, file:, data:
// other than images) get an empty href; goldmark ≥ 1.7.17 also catches them
// when the scheme is entity-encoded (javascript&colon;). html.WithUnsafe must
// never be added here. goldmark is safe for concurrent use.
var md = goldmark.New()

// Markdown renders src as HTML. It cannot fail: should goldmark ever return an
// error, the text comes back escaped in a paragraph.
func Markdown(src string) string {
	if strings.TrimSpace(src) == "" {
		return ""
	}
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		return "<p>" + html.EscapeString(src) + "</p>"
	}
	return buf.String()
}
