package handlers

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// cacheWait bounds how long a write waits for the shared cache to show it. The
// page the browser is sent to next reads the cache; without the wait it could
// show the object as it was before the write the user just made.
const cacheWait = 3 * time.Second

// awaitCache waits until the cached object kind/name exists and done(its
// resourceVersion) is true, or cacheWait passes, or the request ends. The
// watch delivers events in order, so a version different from the one the
// write started from includes the write.
func (h *Handlers) awaitCache(c echo.Context, id kube.KindID, name string, done func(rv string) bool) {
	h.pollCache(c, func() bool {
		m, err := h.deps.Cluster.Meta(id, name)
		return err == nil && done(m.GetResourceVersion())
	})
}

// awaitGone waits until the cache no longer holds kind/name with uid.
func (h *Handlers) awaitGone(c echo.Context, id kube.KindID, name, uid string) {
	h.pollCache(c, func() bool {
		m, err := h.deps.Cluster.Meta(id, name)
		if apierrors.IsNotFound(err) {
			return true
		}
		if err != nil {
			return errors.Is(err, kube.ErrNotSynced) // nothing to wait for
		}
		return string(m.GetUID()) != uid
	})
}

func (h *Handlers) pollCache(c echo.Context, done func() bool) {
	ctx := c.Request().Context()
	deadline := time.Now().Add(cacheWait)
	for !done() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
