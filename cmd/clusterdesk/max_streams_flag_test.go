package main

import (
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/live"
)

// TestMaxStreamsFlag: the default, a value given (flag and environment), and
// bad values refused with the flag's name (a typo must not lift the limit).
func TestMaxStreamsFlag(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil || cfg.maxStreams != live.DefaultMaxStreams {
		t.Fatalf("default: %d %v, want %d", cfg.maxStreams, err, live.DefaultMaxStreams)
	}
	cfg, err = parseFlags([]string{"--max-streams", "300"})
	if err != nil || cfg.maxStreams != 300 {
		t.Fatalf("300: %d %v", cfg.maxStreams, err)
	}
	for _, bad := range []string{"0", "-1", "lots", "1.5"} {
		if _, err := parseFlags([]string{"--max-streams", bad}); err == nil || !strings.Contains(err.Error(), "--max-streams") {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
	t.Setenv("CLUSTERDESK_MAX_STREAMS", "40")
	if cfg, err := parseFlags(nil); err != nil || cfg.maxStreams != 40 {
		t.Errorf("CLUSTERDESK_MAX_STREAMS=40: %d %v", cfg.maxStreams, err)
	}
}
