package ledgerview

import "strings"

// CSVCell neutralises a cell a spreadsheet would evaluate: one whose first
// non-blank character is = + - @ (or that starts with a tab or carriage
// return, which some strip before looking) gets a leading apostrophe, as
// OWASP's CSV injection guidance says. Spreadsheets skip leading spaces
// before reading a formula, so " =cmd|..." is as live as "=cmd|...". Names,
// field managers and users are chosen by whoever writes objects, so they are
// untrusted.
func CSVCell(s string) string {
	t := strings.TrimLeft(s, " \t\r\n\v\f\u00a0\u3000")
	if t == "" {
		return s
	}
	if t != s && (s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	switch t[0] {
	case '=', '+', '-', '@':
		return "'" + s
	}
	return s
}
