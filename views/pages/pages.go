// Package pages holds the full pages of clusterdesk and the fragments that
// htmx swaps into them. Pages take one view model each.
package pages

import (
	"net/http"
	"strconv"

	"github.com/clusterdesk/clusterdesk/views/model"
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

// columnPriority is the priority of the column keyed key (primary if absent).
func columnPriority(cols []model.Column, key string) model.Priority {
	for _, c := range cols {
		if c.Key == key {
			return c.Priority
		}
	}
	return model.PrimaryColumn
}

// plural picks the singular or the plural form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
