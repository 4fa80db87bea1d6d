// Package pages holds the full pages of clusterdesk and the fragments that
// htmx swaps into them. Pages take one view model each.
package pages

import (
	"net/http"
	"strconv"
)

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "Error"
}

func itoa(n int) string { return strconv.Itoa(n) }
