package apfflood

import (
	"bufio"
	"context"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// levelShape is what an instance shows of a level's spec: its limits
// (/metrics) and its number of queues (dump_queues).
type levelShape struct {
	Nominal, Lower, Upper float64
	Queues                int
}

// UpdateLevel replaces the spec of the priority level name (the what-if's
// draft, applied for real) and waits until every instance has applied it:
// until each shows the level's nominal, lower and upper limit seats the new
// spec gives (computed as the API server does, with the server concurrency
// limit ConcurrencyLimit infers) and its number of queues. A change that
// moves none of them (hand size or queue length alone) cannot be seen on an
// instance, and fails the test rather than pretend.
func UpdateLevel(t testing.TB, cfg *rest.Config, name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) {
	t.Helper()
	instances := testcluster.APIServers(t, 1)
	shares := Shares(t, cfg)
	lo, hi := ConcurrencyLimit(Metrics(t, instances[0]), shares)
	if lo > hi || hi-lo > 1000 {
		t.Fatalf("UpdateLevel %s: no server concurrency limit fits the levels' nominal seats (range [%d, %d])", name, lo, hi)
	}
	newShares := maps.Clone(shares)
	newShares[name] = commons(spec).shares
	want := expectedShape(spec, lo, newShares)
	for cl := lo + 1; cl <= hi; cl++ {
		if w := expectedShape(spec, cl, newShares); w != want {
			t.Fatalf("UpdateLevel %s: the new limits depend on the server concurrency limit, which is somewhere in [%d, %d]: %+v or %+v", name, lo, hi, want, w)
		}
	}
	for _, a := range instances {
		if got := shapeOn(t, cfg, a, name); got == want {
			t.Fatalf("UpdateLevel %s: %s shows %+v before the change as after it: the change cannot be seen", name, a.Server, got)
		}
	}
	if err := testcluster.NewFlowcontrol(t, cfg).SetPriorityLevelSpec(context.Background(), name, spec); err != nil {
		t.Fatalf("update priority level %s: %v", name, err)
	}
	for _, a := range instances {
		deadline := time.Now().Add(configWait)
		for got := shapeOn(t, cfg, a, name); got != want; got = shapeOn(t, cfg, a, name) {
			if time.Now().After(deadline) {
				t.Fatalf("after %v, API server %s shows priority level %s as %+v, not %+v", configWait, a.Server, name, got, want)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

type specCommons struct {
	shares              int32
	lendable, borrowing *int32
	queues              int
}

// commons is plSpecCommons (apf_controller.go) and the number of queues.
func commons(spec flowcontrolv1.PriorityLevelConfigurationSpec) specCommons {
	var c specCommons
	switch {
	case spec.Limited != nil:
		if spec.Limited.NominalConcurrencyShares != nil {
			c.shares = *spec.Limited.NominalConcurrencyShares
		}
		c.lendable, c.borrowing = spec.Limited.LendablePercent, spec.Limited.BorrowingLimitPercent
		if q := spec.Limited.LimitResponse.Queuing; q != nil {
			c.queues = int(q.Queues)
		}
	case spec.Exempt != nil:
		if spec.Exempt.NominalConcurrencyShares != nil {
			c.shares = *spec.Exempt.NominalConcurrencyShares
		}
		c.lendable = spec.Exempt.LendablePercent
	}
	return c
}

// expectedShape is the level's limits as finishQueueSetReconfigsLocked
// (apf_controller.go) sets them for serverCL and these shares.
func expectedShape(spec flowcontrolv1.PriorityLevelConfigurationSpec, serverCL int, shares map[string]int32) levelShape {
	c := commons(spec)
	nominal := NominalSeats(serverCL, c.shares, SharesSum(shares))
	lendable, borrowing := 0, serverCL
	if c.lendable != nil {
		lendable = int(math.Round(float64(nominal) * float64(*c.lendable) / 100))
	}
	if c.borrowing != nil {
		borrowing = int(math.Round(float64(nominal) * float64(*c.borrowing) / 100))
	}
	return levelShape{Nominal: float64(nominal), Lower: float64(nominal - lendable), Upper: float64(nominal + borrowing), Queues: c.queues}
}

// shapeOn reads instance a's limits and number of queues of the level name
// (the rows of /debug/api_priority_and_fairness/dump_queues, one per queue:
// apf_controller_debug.go dumpQueues).
func shapeOn(t testing.TB, cfg *rest.Config, a testcluster.APIServer, name string) levelShape {
	t.Helper()
	l := Metrics(t, a).Levels[name]
	s := levelShape{Nominal: l.NominalSeats, Lower: l.LowerSeats, Upper: l.UpperSeats}
	c := rest.CopyConfig(cfg)
	c.Host = a.Server
	body, err := kubernetes.NewForConfigOrDie(c).Discovery().RESTClient().Get().
		AbsPath("/debug/api_priority_and_fairness/dump_queues").Stream(context.Background())
	if err != nil {
		t.Fatalf("%s dump_queues: %v", a.Server, err)
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		if level, _, ok := strings.Cut(sc.Text(), ","); ok && strings.TrimSpace(level) == name {
			s.Queues++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s dump_queues: %v", a.Server, err)
	}
	return s
}
