package search

import "testing"

func TestParseQueryTrims(t *testing.T) {
	if parseQuery(map[string][]string{"q": {"  leader "}}) != "leader" {
		t.Error("query not trimmed")
	}
}
