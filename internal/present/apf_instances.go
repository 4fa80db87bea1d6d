package present

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
)

// instanceHost is how the pages name an API server instance: its address
// without the port, which every instance shares.
func instanceHost(name string) string {
	if host, _, err := net.SplitHostPort(name); err == nil {
		return host
	}
	return name
}

// perInstance tells whether the load has several instances to tell apart.
func perInstance(ld *apfload.Load) bool { return ld != nil && len(ld.Instances) > 1 }

// unreachableText is "10.0.0.3 did not answer (its load is unknown, not
// zero)", or "" when every instance answered.
func unreachableText(ld *apfload.Load) string {
	var hosts []string
	for _, n := range ld.Unreachable() {
		hosts = append(hosts, instanceHost(n))
	}
	switch len(hosts) {
	case 0:
		return ""
	case 1:
		return hosts[0] + " did not answer (its load is unknown, not zero)"
	}
	return strings.Join(hosts, ", ") + " did not answer (their load is unknown, not zero)"
}

// instanceRates is where a rate comes from: "40/s on 10.0.0.2, 0/s on the
// others", "0/s on each of 3 instances", with the instances that did not
// answer named; "" when the load has one instance. get reads the rate from
// one instance's load; ok false means the instance has no such series (it
// counts as 0/s: that instance has seen no such request).
func instanceRates(ld *apfload.Load, get func(*apfload.Load) (float64, bool)) string {
	if !perInstance(ld) {
		return ""
	}
	parts := answeredRates(ld, get)
	if u := unreachableText(ld); u != "" {
		parts = append(parts, u)
	}
	return strings.Join(parts, ", ")
}

// answeredRates is instanceRates without the instances that did not answer:
// "40/s on 10.0.0.2", "0/s on the others", busiest first.
func answeredRates(ld *apfload.Load, get func(*apfload.Load) (float64, bool)) []string {
	type hostRate struct {
		host string
		v    float64
	}
	var busy []hostRate
	var quiet []string
	for _, in := range ld.Instances {
		if !in.Reachable() {
			continue
		}
		v, _ := get(in.Load)
		if !in.Load.HasRates() {
			continue // its second read is not in yet: neither busy nor quiet
		}
		if v > 0 {
			busy = append(busy, hostRate{instanceHost(in.Name), v})
		} else {
			quiet = append(quiet, instanceHost(in.Name))
		}
	}
	slices.SortStableFunc(busy, func(a, b hostRate) int {
		switch {
		case a.v > b.v:
			return -1
		case a.v < b.v:
			return 1
		}
		return 0
	})
	var parts []string
	for _, b := range busy {
		parts = append(parts, formatRate(ld, b.v)+" on "+b.host)
	}
	switch {
	case len(busy) == 0 && len(quiet) > 0:
		parts = append(parts, fmt.Sprintf("0/s on each of %d instances", len(quiet)))
		if len(quiet) == 1 {
			parts[len(parts)-1] = "0/s on " + quiet[0]
		}
	case len(quiet) == 1:
		parts = append(parts, "0/s on "+quiet[0])
	case len(quiet) > 1:
		parts = append(parts, "0/s on the others")
	}
	return parts
}

// answering is how many instances answered the latest scrape.
func answering(ld *apfload.Load) int {
	n := 0
	for _, in := range ld.Instances {
		if in.Reachable() {
			n++
		}
	}
	return n
}

// levelRejected and the others read one series of one instance's load.
func levelRejected(name string) func(*apfload.Load) (float64, bool) {
	return func(ld *apfload.Load) (float64, bool) { l, ok := ld.Levels[name]; return l.RejectedPerSecond, ok }
}

func levelDispatched(name string) func(*apfload.Load) (float64, bool) {
	return func(ld *apfload.Load) (float64, bool) { l, ok := ld.Levels[name]; return l.DispatchedPerSecond, ok }
}

func schemaRejected(name string) func(*apfload.Load) (float64, bool) {
	return func(ld *apfload.Load) (float64, bool) { s, ok := ld.Schemas[name]; return s.RejectedPerSecond, ok }
}

func schemaDispatched(name string) func(*apfload.Load) (float64, bool) {
	return func(ld *apfload.Load) (float64, bool) { s, ok := ld.Schemas[name]; return s.DispatchedPerSecond, ok }
}

// sourceText says where the numbers come from, for the banners and intros.
func sourceText(ld *apfload.Load) string {
	switch {
	case ld == nil:
		return "Metrics are per API server instance: with several API servers behind a load balancer, these numbers are one instance's."
	case ld.Fallback != "":
		return "These numbers are one API server instance's, whichever answered the kubeconfig's address (rates may mix two instances' counters): " +
			ld.Fallback + "."
	case len(ld.Instances) == 1:
		return "The cluster lists one API server instance (" + instanceHost(ld.Instances[0].Name) + "), read at its own address."
	case len(ld.Instances) > 1:
		hosts := make([]string, len(ld.Instances))
		for i, in := range ld.Instances {
			hosts[i] = instanceHost(in.Name)
		}
		msg := fmt.Sprintf("Each of the %d API server instances (%s) is read at its own address; the numbers are their sum, rates per instance from two reads of that instance.",
			len(ld.Instances), strings.Join(hosts, ", "))
		if u := unreachableText(ld); u != "" {
			msg += " " + u + "."
		}
		return msg
	}
	return "Metrics are per API server instance: with several API servers behind a load balancer, these numbers are one instance's."
}

// loadScope is the detail sections' title suffix: which instances the
// numbers cover.
func loadScope(ld *apfload.Load) string {
	if ld != nil && len(ld.Instances) > 0 {
		if len(ld.Instances) == 1 {
			return "(the one API server instance)"
		}
		return fmt.Sprintf("(all %d API server instances)", len(ld.Instances))
	}
	return "(one API server instance)"
}
