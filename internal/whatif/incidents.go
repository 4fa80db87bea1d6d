package whatif

import (
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Incident is a run of minutes in which the API server answered 429s: a
// window worth simulating.
type Incident struct {
	// Start and End bound the incident's minutes: [Start, End).
	Start, End time.Time
	Rejected   int64
}

// incidentGap is how long a lull may last within one incident.
const incidentGap = 5 * time.Minute

// Incidents groups minutes with rejections (in time order, as
// TrafficRejections returns them) into incidents, newest first, at most
// limit of them.
func Incidents(minutes []ledger.MinuteRejections, limit int) []Incident {
	var out []Incident
	for _, m := range minutes {
		if n := len(out); n > 0 && !m.Minute.After(out[n-1].End.Add(incidentGap-time.Minute)) {
			out[n-1].End = m.Minute.Add(time.Minute)
			out[n-1].Rejected += m.Rejected
			continue
		}
		out = append(out, Incident{Start: m.Minute, End: m.Minute.Add(time.Minute), Rejected: m.Rejected})
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
