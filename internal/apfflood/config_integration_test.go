//go:build integration

package apfflood

import (
	"fmt"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestMoveAndUpdateLevelReachEveryInstance: the draft applied for real
// (Move, UpdateLevel) returns only once both of the devcluster's API
// servers apply it: each classifies the user into the new level, and each
// shows the level's new seats and queues.
func TestMoveAndUpdateLevelReachEveryInstance(t *testing.T) {
	instances := testcluster.APIServers(t, 2)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	name := fmt.Sprintf("apfflood-move-%d", time.Now().UnixNano()%1_000_000)
	user := name + "-user"
	Setup(t, admin, name, Limited(1, 4, 2, 2), user)
	Move(t, admin, name, "workload-low", user)
	Move(t, admin, name, name, user)

	before := Metrics(t, instances[0]).Levels[name]
	UpdateLevel(t, admin, name, Limited(5, 8, 2, 2))
	for _, a := range instances {
		after := Metrics(t, a).Levels[name]
		t.Logf("%s: %s had %v nominal seats with 1 share, has %v with 5", a.Server, name, before.NominalSeats, after.NominalSeats)
		if after.NominalSeats <= before.NominalSeats {
			t.Errorf("%s: %v nominal seats with 5 shares, %v with 1", a.Server, after.NominalSeats, before.NominalSeats)
		}
	}
}
