// Package apfsim replays arrivals through a model of one API server's API
// Priority and Fairness (issue 46's what-if): each priority level's
// concurrency limits (nominal, lendable, borrowing), its queues, hand size
// and queue length limit, per-request seats, and the borrowing between
// levels every ten seconds, on a simulated clock.
//
// Why a mirror and not the API server's own queueset: upstream's
// k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset decides each
// request through a promise a goroutine waits on, and its tests drive it
// with one goroutine per request and a fake event clock that counts
// goroutines; a day of a busy cluster is tens of millions of requests, a
// goroutine each would not fit the what-if's 30 s. So this package is a
// single-threaded, event-driven transcription of the same rules, each
// function citing the upstream function it mirrors (k8s.io/apiserver
// v0.37.2), and it uses upstream's code where that code is pure: the
// shuffle-sharding dealer (k8s.io/apiserver/pkg/util/shufflesharding) and
// the flow hash. The backtest (internal/whatif) checks the transcription
// against the API server's own rejection counters.
package apfsim
