package present

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// queueEnv is a test's view of the queue: the engine's inputs and the page's
// in one, as the page layer gives them (handlers/csrs/queue.go).
type queueEnv struct {
	Now       time.Time
	Checks    csrqueue.Checks
	MayDecide func(signer string) bool
	PageSize  int
	Selected  []string
	Cache     *csrqueue.Cache
	Labels    labels.Selector
	MayDelete bool
	Policies  *csrpolicy.Compiled
}

func (e queueEnv) engine() csrqueue.Env {
	return csrqueue.Env{Now: e.Now, Checks: e.Checks, Words: CSRQueueWords{}, MayDecide: e.MayDecide,
		PageSize: e.PageSize, Cache: e.Cache, Labels: e.Labels, Policies: e.Policies}
}

func (e queueEnv) page() CSRQueueEnv {
	return CSRQueueEnv{Now: e.Now, MayDecide: e.MayDecide, PageSize: e.PageSize, Selected: e.Selected,
		MayDelete: e.MayDelete, Policies: e.Policies}
}

// runQueue runs the queue's engine over items and lays the view out.
func runQueue(items []*certificatesv1.CertificateSigningRequest, q CSRQueueQuery, e queueEnv) model.CSRQueuePage {
	return CSRQueueOf(csrqueue.Run(items, q, e.engine()), q, e.page())
}

// runQueueLive works out the named CSRs' change among items and lays it out.
func runQueueLive(items []*certificatesv1.CertificateSigningRequest, names []string, e queueEnv) model.CSRLiveRows {
	return CSRQueueLiveOf(csrqueue.Live(items, names, e.engine()), e.page())
}
