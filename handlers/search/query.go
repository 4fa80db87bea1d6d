package search

import (
	"net/url"
	"strings"
)

// parseQuery reads ?q= and trims it.
func parseQuery(v url.Values) string {
	return strings.TrimSpace(v.Get("q"))
}
