package main

import (
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/handlers"
)

// TestLedgerReadersFlag: the binary's default is today's behaviour
// (listers), so an upgraded plain binary gates nothing new; granted is taken
// from the flag and the environment; anything else is refused with the
// flag's name (a typo must not silently leave the ledger open).
func TestLedgerReadersFlag(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil || cfg.ledger.readers != handlers.LedgerReadersListers {
		t.Fatalf("default: %q %v, want %q", cfg.ledger.readers, err, handlers.LedgerReadersListers)
	}
	cfg, err = parseFlags([]string{"--ledger-readers", "granted"})
	if err != nil || cfg.ledger.readers != handlers.LedgerReadersGranted {
		t.Fatalf("granted: %q %v", cfg.ledger.readers, err)
	}
	for _, bad := range []string{"auditors", "Granted", "none"} {
		if _, err := parseFlags([]string{"--ledger-readers", bad}); err == nil || !strings.Contains(err.Error(), "--ledger-readers") {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
	t.Setenv("CLUSTERDESK_LEDGER_READERS", "granted")
	if cfg, err := parseFlags(nil); err != nil || cfg.ledger.readers != handlers.LedgerReadersGranted {
		t.Errorf("CLUSTERDESK_LEDGER_READERS=granted: %q %v", cfg.ledger.readers, err)
	}
}
