package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
)

// inFlightAccess answers yes, each review held until `together` reviews are in
// flight at once (or 200 ms have passed: the route's own check comes alone, before the page), and records the most in flight.
type inFlightAccess struct {
	together int
	mu       sync.Mutex
	cond     *sync.Cond
	now, max int
}

const hold = 200 * time.Millisecond

func (a *inFlightAccess) Can(context.Context, string, string, string, string, string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.now++
	a.max = max(a.max, a.now)
	a.cond.Broadcast()
	deadline := time.AfterFunc(hold, func() { a.mu.Lock(); a.cond.Broadcast(); a.mu.Unlock() })
	start := time.Now()
	for a.max < a.together && time.Since(start) < hold {
		a.cond.Wait()
	}
	deadline.Stop()
	a.now--
	return true, nil
}

// A person's first queue page asks its access questions side by side, not
// one round trip after the other (issue 27: 200 tabs of 17 people waited
// 13 s for their reviews in turn).
func TestCSRQueueAsksItsAccessQuestionsAtOnce(t *testing.T) {
	ms := newModeServer(t, auth.ModeToken, false)
	access := &inFlightAccess{together: 3} // decide, delete, create at least
	access.cond = sync.NewCond(&access.mu)
	ms.e = newConsole(t, ms.deps, func(d *Deps) { d.Cluster, d.Access = newCSRCluster(), access }).e
	r := httptest.NewRequest(http.MethodGet, "/csrs", nil)
	ms.sign(r)
	if rec := ms.do(r); rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	access.mu.Lock()
	defer access.mu.Unlock()
	if access.max < access.together {
		t.Errorf("at most %d access reviews were in flight at once, want %d: the page asks them in turn", access.max, access.together)
	}
}
