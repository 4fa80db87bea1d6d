// Package durationtext writes durations the way people and policies spell
// them, for the pages and messages that show one.
package durationtext

import (
	"strings"
	"time"
)

// Short is d without its zero tail: 1h, not 1h0m0s; 1h30m; 45s. A policy's
// rate-limit period written "1h" reads back as "1h", and a CSR's
// expirationSeconds of 86400 as "24h".
func Short(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}
