package components

import (
	"strconv"
	"strings"
)

func joinComma(ss []string) string { return strings.Join(ss, ", ") }

// Count is "1 field" or "12 fields".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
