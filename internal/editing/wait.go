package editing

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// CacheWait bounds how long a write waits for the shared cache to show it. The
// page the browser is sent to next reads the cache; without the wait it could
// show the object as it was before the write the user just made.
const CacheWait = 3 * time.Second

// AwaitCache waits until the cached object kind/name exists and done(its
// resourceVersion) is true, or CacheWait passes, or ctx ends. The watch
// delivers events in order, so a version different from the one the write
// started from includes the write.
func AwaitCache(ctx context.Context, c Cache, id kube.KindID, name string, done func(rv string) bool) {
	poll(ctx, func() bool {
		m, err := c.Meta(id, name)
		return err == nil && done(m.GetResourceVersion())
	})
}

// AwaitWritten waits until the cache shows the write that moved name from
// version from to after ("" from: a creation, any version will do).
func AwaitWritten(ctx context.Context, c Cache, id kube.KindID, name, from, after string) {
	AwaitCache(ctx, c, id, name, func(rv string) bool { return from == "" || rv != from || rv == after })
}

// awaitGone waits until the cache no longer holds kind/name with uid.
func awaitGone(ctx context.Context, c Cache, id kube.KindID, name, uid string) {
	poll(ctx, func() bool {
		m, err := c.Meta(id, name)
		if apierrors.IsNotFound(err) {
			return true
		}
		if err != nil {
			return errors.Is(err, kube.ErrNotSynced) // nothing to wait for
		}
		return string(m.GetUID()) != uid
	})
}

func poll(ctx context.Context, done func() bool) {
	deadline := time.Now().Add(CacheWait)
	for !done() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
