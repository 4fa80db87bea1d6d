package durationtext

import (
	"testing"
	"time"
)

func TestShortDropsTheZeroTail(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Hour: "1h", 90 * time.Minute: "1h30m", 30 * time.Minute: "30m",
		10 * time.Minute: "10m", 45 * time.Second: "45s", 24 * time.Hour: "24h", time.Hour + time.Second: "1h0m1s",
		8784 * time.Hour: "8784h", 1500 * time.Millisecond: "1.5s"} {
		if got := Short(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
