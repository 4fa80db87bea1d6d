package components

import (
	"context"
	"io"
	"strings"
	"unicode"

	"github.com/a-h/templ"
)

// BreakHints renders text with a <wbr> where an identifier reads well split:
// after '.', '/', ':', '_', '@' and '=' and between a lower-case letter and
// an upper-case one (camelCase). Narrow table cells break anywhere
// (overflow-wrap: anywhere, so that a table never scrolls sideways); that
// fallback is used only when no such hint fits the line, so a signer reads
// "kubernetes.io/ kube-apiserver-client", not "kubernetes.i o/kube-".
func BreakHints(text string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		for i, seg := range breakSegments(text) {
			if i > 0 {
				if _, err := io.WriteString(w, "<wbr>"); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(w, templ.EscapeString(seg)); err != nil {
				return err
			}
		}
		return nil
	})
}

// breakSegments splits text where BreakHints puts a <wbr>; joined, the
// segments are text again.
func breakSegments(text string) []string {
	var segs []string
	start := 0
	var prev rune
	for i, r := range text {
		if i > start && unicode.IsUpper(r) && unicode.IsLower(prev) {
			segs = append(segs, text[start:i])
			start = i
		}
		if strings.ContainsRune("./:_@=", r) && i+1 < len(text) {
			segs = append(segs, text[start:i+1])
			start = i + 1
		}
		prev = r
	}
	return append(segs, text[start:])
}
