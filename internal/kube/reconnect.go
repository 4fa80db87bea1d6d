package kube

import (
	"context"
	"errors"
	"net"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Reconnect pacing while the API server cannot be reached at all. client-go's
// reflector waits between failed LISTs and WATCHes with a backoff that reaches
// 30 s with a jitter factor of 1, so after an outage of half a minute or more
// an informer can sit up to a minute longer on stale data once the API server
// is back. A request that never left this process (connection refused, no
// route, dial timeout) costs the API server nothing, so while that is the
// failure the informer's request itself is retried at this pace instead; any
// answer from the API server, error or not, goes back to the reflector and its
// backoff.
const (
	reconnectFirst = 500 * time.Millisecond
	reconnectMax   = 4 * time.Second
)

// untilReachable calls do until it returns an error other than "could not
// connect", or ctx ends. Each failed attempt is passed to report (the kind's
// status shows the lost watch meanwhile).
func untilReachable[T any](ctx context.Context, do func() (T, error), report func(error)) (T, error) {
	wait := reconnectFirst
	for {
		v, err := do()
		if err == nil || !notConnected(err) {
			return v, err
		}
		report(err)
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(wait):
		}
		wait = min(2*wait, reconnectMax)
	}
}

// notConnected reports an error of a request that never reached the API
// server: the connection could not be made.
func notConnected(err error) bool {
	var op *net.OpError
	return utilnet.IsConnectionRefused(err) || (errors.As(err, &op) && op.Op == "dial")
}
