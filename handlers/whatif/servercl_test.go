package whatif

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/apfsim"
)

func limited(name string, shares int32) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To(shares),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
}

// TestInferServerCLFindsTheLimitTheNominalSeatsCameFrom: levels
// instantiated for a limit (as the API server does) give back that limit,
// for several limits and share mixes; numbers no limit explains give none.
func TestInferServerCLFindsTheLimitTheNominalSeatsCameFrom(t *testing.T) {
	pls := []*flowcontrolv1.PriorityLevelConfiguration{limited("a", 20), limited("b", 100), limited("c", 5), limited("d", 40)}
	for _, s := range []int{600, 800, 3000, 1234} {
		ls, err := apfsim.Levels(pls, s)
		if err != nil {
			t.Fatal(err)
		}
		obs := map[string]apfload.LevelLoad{}
		for _, l := range ls {
			obs[l.Name] = apfload.LevelLoad{HasLimits: true, NominalSeats: float64(l.NominalCL)}
		}
		got, ok := inferServerCL(obs, pls)
		if !ok {
			t.Fatalf("%d: not inferred", s)
		}
		// The smallest consistent limit: s itself or a neighbour the coarse
		// shares cannot tell from it, which gives every level the same seats.
		back, _ := apfsim.Levels(pls, got)
		for i := range ls {
			if back[i].NominalCL != ls[i].NominalCL || got > s {
				t.Errorf("%d: inferred %d, whose levels differ (%+v)", s, got, back[i])
			}
		}
	}
	obs := map[string]apfload.LevelLoad{"a": {HasLimits: true, NominalSeats: 500}, "b": {HasLimits: true, NominalSeats: 1}}
	if s, ok := inferServerCL(obs, pls); ok {
		t.Errorf("inconsistent seats inferred %d", s)
	}
	if _, ok := inferServerCL(nil, pls); ok {
		t.Error("nothing observed, something inferred")
	}
}

func TestServerCLWordsSayWhichLimitEachInstanceUsed(t *testing.T) {
	w := serverCLWords([]string{"10.0.0.1:6443", ""}, map[string]int{"10.0.0.1:6443": 800})
	if len(w) != 2 || w[0] != "10.0.0.1:6443: 800 seats, inferred from the nominal seats its priority levels report (live load)" ||
		w[1] != "traffic naming no instance: 600 seats, the API server's default (400 + 200 in flight): the live load did not tell this instance's" {
		t.Errorf("%q", w)
	}
}
