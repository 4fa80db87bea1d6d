package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Defaults of the receiver's bounds.
const (
	// DefaultMaxBody bounds one batch's body. The API server sends up to
	// --audit-webhook-batch-max-size events (default 400) per batch. With the
	// devcluster's policy (README) the largest events are the console's
	// kinds at RequestResponse: request and response objects, a CSR's
	// approval about 6 KiB, a webhook configuration with CA bundles some tens
	// of KiB; CRDs, whose schemas reach a megabyte, are at Metadata (about
	// 1 KiB). 400 events of 64 KiB each is 25 MiB: 32 MiB leaves headroom.
	// A bigger batch gets 413; the API server logs it, so lower its
	// batch size rather than raise this.
	DefaultMaxBody = 32 << 20
	// DefaultInFlight is how many batches are decoded and stored at once;
	// memory is bounded by about twice DefaultMaxBody each (the body and
	// what it decodes to). The API server sends one batch at a time per
	// backend, so more than a few in flight means more API servers or a
	// flood.
	DefaultInFlight = 4
	// appendTimeout bounds one Append: a ledger that does not answer within
	// it is unavailable (503), and the API server retries the batch.
	appendTimeout = 10 * time.Second
)

// Retry-After values. The API server's audit webhook retries every failed
// batch whatever the status (retryOnError in
// k8s.io/apiserver/plugin/pkg/audit/webhook/webhook.go, with the backoff of
// k8s.io/apiserver/pkg/util/webhook/webhook.go: 10 s initial, ×1.5, 5 steps),
// and client-go's REST client honours Retry-After on a 429 or 5xx before
// that; so a full receiver answers 429 and an unavailable ledger 503, each
// with Retry-After, never 200 before the ledger committed.
const (
	retryBusy        = 1 // s: a batch slot frees as soon as one Append ends
	retryUnavailable = 5 // s: the database has to come back
)

// Options configures a Receiver.
type Options struct {
	Store   ledger.Store
	Senders Senders
	// MaxBody (default DefaultMaxBody) and InFlight (default DefaultInFlight)
	// bound the memory batches take.
	MaxBody  int64
	InFlight int
	Log      *slog.Logger
}

// Receiver is the audit webhook backend: an http.Handler for POST / of an
// audit.k8s.io/v1 EventList that answers 200 only once the ledger has
// committed the batch's entries (nothing acknowledged is lost on a crash).
type Receiver struct {
	o     Options
	slots chan struct{}
	c     counters
}

// NewReceiver returns the receiver; it refuses to build one without any
// sender check.
func NewReceiver(o Options) (*Receiver, error) {
	if o.Store == nil {
		return nil, errors.New("audit webhook: no ledger to store into")
	}
	if !o.Senders.configured() {
		return nil, errors.New("audit webhook: neither a client CA nor a token: anybody could write the ledger")
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.InFlight <= 0 {
		o.InFlight = DefaultInFlight
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Receiver{o: o, slots: make(chan struct{}, o.InFlight)}, nil
}

// Counts returns the receiver's totals (metrics, tests).
func (rc *Receiver) Counts() Counts { return rc.c.snapshot() }

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Authentication comes first: nothing an unauthenticated client sends
	// is read, and it takes no batch slot.
	if !rc.o.Senders.authenticated(r) {
		rc.refuse(w, http.StatusUnauthorized, RefusedUnauthenticated, 0)
		return
	}
	if r.URL.Path != "/" {
		rc.refuse(w, http.StatusNotFound, RefusedBadRequest, 0)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		rc.refuse(w, http.StatusMethodNotAllowed, RefusedBadRequest, 0)
		return
	}
	if r.ContentLength > rc.o.MaxBody {
		rc.refuse(w, http.StatusRequestEntityTooLarge, RefusedTooLarge, 0)
		return
	}
	select {
	case rc.slots <- struct{}{}:
		defer func() { <-rc.slots }()
	default:
		rc.refuse(w, http.StatusTooManyRequests, RefusedBusy, retryBusy)
		return
	}
	var list auditv1.EventList
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, rc.o.MaxBody)).Decode(&list); err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			rc.refuse(w, http.StatusRequestEntityTooLarge, RefusedTooLarge, 0)
			return
		}
		rc.refuse(w, http.StatusBadRequest, RefusedBadRequest, 0)
		return
	}
	entries := make([]ledger.Entry, 0, len(list.Items))
	for i := range list.Items {
		if e, ok := Entry(&list.Items[i]); ok {
			entries = append(entries, e)
		}
	}
	added := 0
	if len(entries) > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), appendTimeout)
		var err error
		added, err = rc.o.Store.Append(ctx, entries)
		cancel()
		if err != nil {
			rc.o.Log.Warn("audit webhook: the ledger did not store a batch; the API server will retry it", "err", err, "entries", len(entries))
			rc.refuse(w, http.StatusServiceUnavailable, RefusedUnavailable, retryUnavailable)
			return
		}
	}
	rc.c.received.Add(int64(len(list.Items)))
	rc.c.stored.Add(int64(added))
	rc.c.duplicate.Add(int64(len(entries) - added))
	rc.c.ignored.Add(int64(len(list.Items) - len(entries)))
	w.WriteHeader(http.StatusOK)
}

func (rc *Receiver) refuse(w http.ResponseWriter, code int, reason string, retryAfter int) {
	rc.c.refuse(reason)
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	http.Error(w, http.StatusText(code), code)
}
