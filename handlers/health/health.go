// Package health is the probes: /healthz (the process serves) and /readyz
// (every kind the console may list is synced, and, with replicas, the
// sign-outs are current; the ledger's state is reported, never a reason to be
// unready). Both are public routes (handlers/route_path.go).
package health

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Deps are the probes' ports.
type Deps struct {
	Cluster ports.Cluster
	// Gate's session revoker, when shared by replicas, says whether it has
	// kept up with the cluster's sign-outs.
	Gate *auth.Gate
	// Ledger is the durable history (nil: none); /readyz says whether it answers.
	Ledger ledger.Store
	// Log gets why the ledger does not answer, which /readyz does not say.
	Log *slog.Logger
}

// Handlers serves the probes.
type Handlers struct{ d Deps }

// New builds the probes' handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds /healthz and /readyz.
func (h *Handlers) Register(e *echo.Echo) {
	e.GET(urls.Healthz, h.healthz)
	e.GET(urls.Readyz, h.readyz)
}

// healthz says the process is serving.
func (h *Handlers) healthz(c echo.Context) error { return c.String(http.StatusOK, "ok\n") }

// readyz is 200 once every kind the identity may list is synced, else 503 with
// each kind's state, so an operator sees which kind holds readiness back and why.
func (h *Handlers) readyz(c echo.Context) error {
	var b strings.Builder
	for _, st := range h.d.Cluster.Statuses() {
		b.WriteString(string(st.Kind.ID) + ": " + string(st.State))
		if st.Err != nil {
			b.WriteString(" (" + st.Err.Error() + ")")
		}
		b.WriteByte('\n')
	}
	ready := h.d.Cluster.Ready()
	// Replicas (auth.SharedRevoker): a replica whose watch of the sign-outs
	// is behind refuses every session, so it takes itself out of the load
	// balancer's rotation too, saying why.
	if rv, ok := h.signOuts(); ok {
		b.WriteString("sign-outs: " + rv.Status() + "\n")
		ready = ready && rv.Ready()
	}
	// The ledger is reported, never a reason to be unready. Replicas share
	// one PostgreSQL: were its outage to make them unready, it would take
	// every replica out of the Service at once, and with them the writes
	// people make through the console, which need only the API server (the
	// decision is the API server's; the ledger catches up from the audit
	// stream, whose batches the API server retries while the webhook
	// answers 503). The pages and /readyz say the ledger is unreachable;
	// the log says why, for the operator.
	if h.d.Ledger != nil {
		b.WriteString("ledger: " + h.ledgerState(c.Request().Context()) + "\n")
	}
	if !ready {
		return c.String(http.StatusServiceUnavailable, "not ready\n"+b.String())
	}
	return c.String(http.StatusOK, "ready\n"+b.String())
}

// signOutsStatus is a revoker that can say whether it is current.
type signOutsStatus interface {
	Ready() bool
	Status() string
}

// signOuts is the session revoker when it can be behind the cluster (shared
// by replicas).
func (h *Handlers) signOuts() (signOutsStatus, bool) {
	if h.d.Gate == nil || h.d.Gate.Sessions == nil {
		return nil, false
	}
	rv, ok := h.d.Gate.Sessions.Revocations.(signOutsStatus)
	return rv, ok
}

// ledgerPingTimeout bounds the ledger's ping, well within a probe's timeout
// (1 s by default in Kubernetes).
const ledgerPingTimeout = 500 * time.Millisecond

// ledgerState is "ok" or that the ledger does not answer. Never why: /readyz
// is public, and a driver's error names the database's user, database, host
// and port (pgx: "failed to connect to `user=… database=…`: 10.0.0.9:5432
// …"); the log has it.
func (h *Handlers) ledgerState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, ledgerPingTimeout)
	defer cancel()
	if err := h.d.Ledger.Ping(ctx); err != nil {
		if h.d.Log != nil {
			h.d.Log.Warn("readyz: the ledger's database does not answer", "err", err)
		}
		return "unreachable; writes through the console go on, the API server retries its audit batches"
	}
	return "ok"
}
