package admission

import (
	"fmt"
	"math"
)

// Health lint codes.
const (
	CodeFailedOpen = "failed-open"
	CodeSlow       = "slow"
)

// SlowFraction is how much of its timeoutSeconds a webhook's p99 may take
// before it is flagged: past it, a little more latency turns calls into
// timeouts (rejections with Fail, silent skips with Ignore).
const SlowFraction = 0.8

// Health is what one API server instance measured of one webhook between two
// reads of its /metrics.
type Health struct {
	FailedOpen float64 // calls that failed and were ignored (failurePolicy Ignore)
	P99        float64 // seconds; NaN when no call finished in the window
}

// LintHealth flags a webhook that failed open or is slow in the window.
func LintHealth(h Hook, m Health) []Finding {
	var out []Finding
	if m.FailedOpen > 0 {
		out = append(out, Finding{Code: CodeFailedOpen, Severity: Error, Title: "Failed open",
			Message: fmt.Sprintf("%v calls to this webhook failed since the last read, and failurePolicy Ignore let those requests through unchecked.", m.FailedOpen)})
	}
	limit := SlowFraction * float64(h.TimeoutSeconds)
	if !math.IsNaN(m.P99) && h.TimeoutSeconds > 0 && m.P99 > limit {
		out = append(out, Finding{Code: CodeSlow, Severity: Warning, Title: "Slow",
			Message: fmt.Sprintf("p99 latency %.2fs is above %.0f%% of its timeout (%ds): slower calls time out.", m.P99, SlowFraction*100, h.TimeoutSeconds)})
	}
	return out
}
