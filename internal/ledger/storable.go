package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"
)

// An entry's strings come from whoever sent the request: a name from the URL
// path, a user agent, a refusal's message quoting the request. PostgreSQL
// refuses a batch holding one of them that a TEXT column or a btree index
// cannot take, where SQLite stores it; so the store makes every value
// storable before either backend sees it, the same way on both (issue 43).

// textOf is s as a TEXT column of either backend holds it: PostgreSQL's UTF8
// databases refuse the NUL byte and invalid UTF-8 (22021, "invalid byte
// sequence"). A NUL becomes U+2400 (␀, the symbol for NUL) and each run of
// invalid bytes U+FFFD: visible for what they were, never silently dropped.
// The replacement is not reversible (a value may hold ␀ itself); the bytes
// the API server received are in its own audit log.
func textOf(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\u2400")
}

// maxIndexedBytes bounds a string a btree index holds (id, name, user_name,
// signer). PostgreSQL refuses an index row over about 2,700 bytes (a third
// of a page: 54000, "index row size exceeds btree maximum"); each index has
// one such string beside short ones (kind, action, source, two integers).
// Kubernetes bounds names to 253 bytes and signer names to 571, so only a
// value the API server refused to act on reaches the bound.
const maxIndexedBytes = 1024

// keyOf is the indexed column's value of a storable s: s itself when within
// maxIndexedBytes, else its first bytes and a visible marker with s's length
// and digest, so that distinct long values keep distinct keys and a Query
// for the whole value (keyed the same way) finds it. The whole value is
// kept in full_values (row.go) and is what reads return.
func keyOf(s string) string {
	if len(s) <= maxIndexedBytes {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	marker := "…[" + strconv.Itoa(len(s)) + " bytes, sha256:" + hex.EncodeToString(sum[:]) + "]"
	cut := maxIndexedBytes - len(marker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}

// queryKey is how a Query's exact value meets the indexed column.
func queryKey(s string) string { return keyOf(textOf(s)) }

// storable is e with every string made storable (textOf); the bound of the
// indexed ones is applied by entryArgs, which keeps their whole values.
func storable(e Entry) Entry {
	for _, f := range []*string{&e.Source, &e.ID, &e.AuditID, &e.User, &e.Impersonator, &e.UserAgent, &e.Verb, &e.Action,
		&e.APIGroup, &e.APIVersion, &e.Resource, &e.Subresource, &e.Kind, &e.Name, &e.UID, &e.Signer,
		&e.Result, &e.Reason, &e.Diff, &e.RV, &e.Manager, &e.Policy.Name, &e.Policy.Hash} {
		*f = textOf(*f)
	}
	// Groups and source IPs are stored as JSON, whose escapes hold any
	// string: json.Marshal writes a NUL as \u0000 and invalid UTF-8 as
	// U+FFFD on both backends alike.
	return e
}
