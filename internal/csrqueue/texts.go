package csrqueue

import (
	"sync"
	"unique"
)

// Findings' texts repeat: the checks word the same few findings for most
// requests of a signer ("requests no duration: the signer's default
// applies"), and the queue keeps each decided request's text for the filter,
// ~190 bytes each, 10 MB at 53,000 CSRs, almost all of them copies. sharedText
// keeps one copy of each text, for a bounded number of texts: past the bound
// (findings that name their request, say) a text is kept as it is.

const maxSharedTexts = 4096

var sharedTexts = struct {
	mu sync.Mutex
	m  map[string]string
}{m: map[string]string{}}

// sharedText is text, or the copy of it kept before.
func sharedText(text string) string {
	if text == "" {
		return text
	}
	sharedTexts.mu.Lock()
	defer sharedTexts.mu.Unlock()
	if s, ok := sharedTexts.m[text]; ok {
		return s
	}
	if len(sharedTexts.m) < maxSharedTexts {
		sharedTexts.m[text] = text
	}
	return text
}

// internText is text's canonical copy (Go's unique package: kept while some
// fact refers to it, unbounded, unlike sharedText): for the search text
// that requests share by what they are, not by what the checks found
// (signer, requester, duration, status; one set per node and signer in a
// cluster of kubelets).
func internText(text string) string {
	if text == "" {
		return text
	}
	return unique.Make(text).Value()
}
