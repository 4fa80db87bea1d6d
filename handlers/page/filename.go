package page

// SafeFilename keeps letters, digits, '-', '_' and '.' of a download's name
// (the rest become '_'), for a Content-Disposition filename: an object's
// name or a filter never reaches the header unquoted.
func SafeFilename(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}
