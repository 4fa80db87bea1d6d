package main

import (
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

func TestLedgerFlags(t *testing.T) {
	t.Setenv("CLUSTERDESK_DATA_DIR", "/var/lib/cd")
	c, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ledger.dsn != "sqlite:/var/lib/cd/ledger.db" || c.ledger.retention != DefaultLedgerRetention || c.ledger.webhook.listen != "" {
		t.Errorf("defaults: %+v", c.ledger)
	}
	c, err = parseFlags([]string{"--ledger", "postgres://u@db/x", "--ledger-retention", "0"})
	if err != nil || c.ledger.dsn != "postgres://u@db/x" || c.ledger.retention != 0 {
		t.Errorf("postgres, kept forever: %+v %v", c.ledger, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ledger-retention", "-1h"}, "--ledger-retention"},
		{[]string{"--ledger-retention", "a year"}, "--ledger-retention"},
		{[]string{"--audit-webhook-listen", ":8443"}, "--audit-webhook-tls-cert"},
		{[]string{"--audit-webhook-listen", ":8443", "--audit-webhook-tls-cert", "c", "--audit-webhook-tls-key", "k"}, "anybody could write the ledger"},
		{[]string{"--ledger", "off", "--audit-webhook-listen", ":8443"}, "needs a ledger"},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
	if ledger.RedactDSN("postgres://u:hunter2@db:5432/x") != "postgres://…@db:5432/x" {
		t.Errorf("redactDSN keeps the password: %s", ledger.RedactDSN("postgres://u:hunter2@db:5432/x"))
	}
}
