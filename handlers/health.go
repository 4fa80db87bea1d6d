package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// healthz says the process is serving.
func (h *Handlers) healthz(c echo.Context) error { return c.String(http.StatusOK, "ok\n") }

// readyz is 200 once every kind the identity may list is synced, else 503 with
// each kind's state, so an operator sees which kind holds readiness back and why.
func (h *Handlers) readyz(c echo.Context) error {
	var b strings.Builder
	for _, st := range h.deps.Cluster.Statuses() {
		b.WriteString(string(st.Kind.ID) + ": " + string(st.State))
		if st.Err != nil {
			b.WriteString(" (" + st.Err.Error() + ")")
		}
		b.WriteByte('\n')
	}
	if !h.deps.Cluster.Ready() {
		return c.String(http.StatusServiceUnavailable, "not ready\n"+b.String())
	}
	return c.String(http.StatusOK, "ready\n"+b.String())
}
