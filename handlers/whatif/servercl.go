package whatif

import (
	"fmt"
	"math"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/apfsim"
	"github.com/clusterdesk/clusterdesk/internal/whatif"
)

// maxServerCL bounds the search for an instance's server concurrency
// limit: far above any flag an API server is run with.
const maxServerCL = 100_000

// serverCLs infers each instance's total concurrency limit
// (--max-requests-inflight plus --max-mutating-requests-inflight) from the
// nominal seats the live load sampler read from it: the API server gives a
// limited level ceil(serverCL × shares / Σ shares) seats
// (k8s.io/apiserver pkg/util/flowcontrol/apf_controller.go,
// finishQueueSetReconfigsLocked), so the limit is a value every level's observed nominal
// seats agree with: the flags' default sum (600) when it does, else the
// smallest (several neighbours agree when the shares are coarse). An instance the sampler did not read, or whose
// numbers no limit explains (its levels changed since), runs with
// whatif.DefaultServerCL; words say which for each.
func serverCLs(ld *apfload.Load, levels []*flowcontrolv1.PriorityLevelConfiguration) map[string]int {
	out := map[string]int{}
	if ld == nil {
		return out
	}
	for _, in := range ld.Instances {
		if in.Load == nil {
			continue
		}
		if s, ok := inferServerCL(in.Load.Levels, levels); ok {
			out[in.Name] = s
		}
	}
	return out
}

// inferServerCL is the smallest server limit s under which every level the
// sampler reports limits of gets the nominal seats it reports, levels
// instantiated as the simulation does (apfsim.Levels, which mirrors the
// API server). The nominal seats are ceilings of shares of s, so they sum
// to between s and s plus the number of levels: the search starts above.
func inferServerCL(observed map[string]apfload.LevelLoad, levels []*flowcontrolv1.PriorityLevelConfiguration) (int, bool) {
	want := map[string]int{}
	sum := 0
	for _, pl := range levels {
		if o, ok := observed[pl.Name]; ok && o.HasLimits && pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementLimited {
			want[pl.Name] = int(math.Round(o.NominalSeats))
			sum += want[pl.Name]
		}
	}
	if len(want) == 0 {
		return 0, false
	}
	// The flags' default sum first: when the seats cannot tell it from its
	// neighbours, it is the likeliest.
	if agrees(levels, whatif.DefaultServerCL, want) {
		return whatif.DefaultServerCL, true
	}
	// Levels the sampler did not report take seats too: allow for them.
	for s := 1; s <= min(maxServerCL, 2*sum+100); s++ {
		if agrees(levels, s, want) {
			return s, true
		}
	}
	return 0, false
}

// agrees tells whether levels instantiated for the server limit s give
// every level in want its seats.
func agrees(levels []*flowcontrolv1.PriorityLevelConfiguration, s int, want map[string]int) bool {
	ls, err := apfsim.Levels(levels, s)
	if err != nil {
		return false
	}
	for _, l := range ls {
		if n, seen := want[l.Name]; seen && l.NominalCL != n {
			return false
		}
	}
	return true
}

// serverCLWords says, per instance the run saw, which limit it used.
func serverCLWords(instances []string, inferred map[string]int) []string {
	var out []string
	for _, in := range instances {
		name := in
		if name == "" {
			name = "traffic naming no instance"
		}
		if s, ok := inferred[in]; ok {
			out = append(out, fmt.Sprintf("%s: %d seats, inferred from the nominal seats its priority levels report (live load)", name, s))
		} else {
			out = append(out, fmt.Sprintf("%s: %d seats, the API server's default (400 + 200 in flight): the live load did not tell this instance's", name, whatif.DefaultServerCL))
		}
	}
	return out
}
