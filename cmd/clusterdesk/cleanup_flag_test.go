package main

import (
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers"
)

// TestCleanupProgressAfterFlag: the default, a value given, and bad values
// refused with the flag's name (a typo must not silently fall back).
func TestCleanupProgressAfterFlag(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil || cfg.cleanupProgressAfter != handlers.DefaultCleanupProgressAfter {
		t.Fatalf("default: %v %v, want %v", cfg.cleanupProgressAfter, err, handlers.DefaultCleanupProgressAfter)
	}
	cfg, err = parseFlags([]string{"--cleanup-progress-after", "250ms"})
	if err != nil || cfg.cleanupProgressAfter != 250*time.Millisecond {
		t.Fatalf("250ms: %v %v", cfg.cleanupProgressAfter, err)
	}
	for _, bad := range []string{"2", "0s", "-1s", "soon"} {
		if _, err := parseFlags([]string{"--cleanup-progress-after", bad}); err == nil || !strings.Contains(err.Error(), "--cleanup-progress-after") {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
	t.Setenv("CLUSTERDESK_CLEANUP_PROGRESS_AFTER", "5x")
	if _, err := parseFlags(nil); err == nil {
		t.Error("a bad CLUSTERDESK_CLEANUP_PROGRESS_AFTER was accepted")
	}
}
