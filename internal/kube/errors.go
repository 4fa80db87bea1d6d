package kube

import (
	"errors"
	"fmt"
)

// ErrNotSynced matches (with errors.Is) the error a lister returns while its kind's
// cache is still filling: a page should say "loading", not "empty".
var ErrNotSynced = errors.New("not synced yet")

// NotSyncedError is the error listers return before their kind's first sync. LastErr is
// why it is taking long (say, the API server is unreachable), or nil.
type NotSyncedError struct {
	Kind    KindID
	LastErr error
}

func (e *NotSyncedError) Error() string {
	if e.LastErr != nil {
		return fmt.Sprintf("%s: %v: %v", e.Kind, ErrNotSynced, e.LastErr)
	}
	return fmt.Sprintf("%s: %v", e.Kind, ErrNotSynced)
}

// Is makes errors.Is(err, ErrNotSynced) true. LastErr is deliberately not unwrapped:
// a Forbidden or NotFound from a failed LIST must not make a loading page look like
// a denied or missing object.
func (e *NotSyncedError) Is(target error) bool { return target == ErrNotSynced }

// ErrNotServed is the error of a kind whose group and version the API server does not
// serve (for instance flowcontrol on a server older than 1.26).
var ErrNotServed = errors.New("not served by this API server")
