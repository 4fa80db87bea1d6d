package attention

import (
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Rejecting is a priority level rejecting requests as one API server
// instance measured it. Instance is "" when the sampler read one address
// only (the console cannot reach the instances: apfload falls back to the
// kubeconfig's server), so the rate is not attributed to an instance.
type Rejecting struct {
	Level     string
	PerSecond float64
	Instance  string
}

// RejectingOf is the levels the load shows rejecting within the sampler's
// window (none before its second read: no rates yet). When the sampler read
// every API server instance, each instance rejecting is its own entry:
// seats and queues are per instance, so "rejecting 40/s on 10.0.0.2" is what
// the admin must see, not a total that hides which instance is overloaded.
func RejectingOf(ld apfload.Load) []Rejecting {
	var out []Rejecting
	if len(ld.Instances) > 0 {
		for _, in := range ld.Instances {
			if in.Load == nil {
				continue // unreachable: the FlowSchema pages say so; no rate to show
			}
			for name, l := range in.Load.Levels {
				if l.RejectedPerSecond > 0 {
					out = append(out, Rejecting{Level: name, PerSecond: l.RejectedPerSecond, Instance: in.Name})
				}
			}
		}
		return out
	}
	for name, l := range ld.Levels {
		if l.RejectedPerSecond > 0 {
			out = append(out, Rejecting{Level: name, PerSecond: l.RejectedPerSecond})
		}
	}
	return out
}

// Levels is the priority levels rejecting requests; each entry links the
// level's page (its load and the FlowSchemas that feed it), the item the list
// of levels with their load.
func Levels(rejecting []Rejecting) (Item, bool) {
	if len(rejecting) == 0 {
		return Item{}, false
	}
	it := Item{Concern: LevelsRejecting, Kinds: []kube.KindID{kube.PriorityLevels}, Href: urls.List(kube.PriorityLevels)}
	entries := make([]Entry, 0, len(rejecting))
	levels := map[string]bool{}
	for _, r := range rejecting {
		levels[r.Level] = true
		entries = append(entries, Entry{Name: r.Level, Severity: Danger, Rate: r.PerSecond, Instance: r.Instance,
			Href: urls.Object(kube.PriorityLevels, r.Level)})
	}
	it.Count = len(levels)
	it.Entries, it.Severity = top(entries)
	return it, true
}
