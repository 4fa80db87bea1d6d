package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/traffic"
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
	Store ledger.Store
	// Writes, when set, also keeps every write the events report at
	// RequestResponse (RecordedWrite): the replay's recorded writes.
	Writes ledger.WriteStore
	// Traffic, when set, also folds every request the events report into
	// the recorded traffic (internal/traffic), per API server instance.
	Traffic ledger.TrafficStore
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
	instance, ok := instanceOf(r.URL.Path)
	if !ok {
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
	// The events stay raw until each is decoded: an entry's identity is the
	// digest of its event as received (eventID).
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, rc.o.MaxBody)).Decode(&list); err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			rc.refuse(w, http.StatusRequestEntityTooLarge, RefusedTooLarge, 0)
			return
		}
		rc.refuse(w, http.StatusBadRequest, RefusedBadRequest, 0)
		return
	}
	entries := make([]ledger.Entry, 0, len(list.Items))
	var writes []ledger.Write
	var flows *traffic.Batch
	if rc.o.Traffic != nil {
		flows = traffic.NewBatch(instance)
	}
	anonymous := 0
	for i, raw := range list.Items {
		var ev auditv1.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			rc.refuse(w, http.StatusBadRequest, RefusedBadRequest, 0)
			return
		}
		list.Items[i] = nil // the decoded event holds what the ledger keeps
		e, ok := Entry(&ev, raw)
		refusedAnonymous := anonymousRefusal(&ev)
		switch {
		case !ok:
		case refusedAnonymous:
			anonymous++
		default:
			entries = append(entries, e)
		}
		if rc.o.Writes != nil && !refusedAnonymous {
			id := e.ID
			if !ok {
				id = eventID(raw)
			}
			if w, ok := RecordedWrite(&ev, id); ok {
				writes = append(writes, w)
			}
		}
		if flows != nil {
			flows.Add(&ev, refusedAnonymous)
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
	recorded := 0
	if len(writes) > 0 {
		// After the entries: a batch whose writes fail is answered 503 and
		// retried whole, its entries and writes each stored once (by ID).
		ctx, cancel := context.WithTimeout(r.Context(), appendTimeout)
		var err error
		recorded, err = rc.o.Writes.AppendWrites(ctx, writes)
		cancel()
		if err != nil {
			rc.o.Log.Warn("audit webhook: the recorded writes of a batch were not stored; the API server will retry it", "err", err, "writes", len(writes))
			rc.refuse(w, http.StatusServiceUnavailable, RefusedUnavailable, retryUnavailable)
			return
		}
	}
	if flows != nil {
		// Last: a batch whose traffic fails is answered 503 and retried
		// whole, its entries and writes stored once (by ID) and its traffic
		// added once (this transaction rolled back). A batch committed
		// whose 200 the API server never read is counted twice: the
		// traffic has no identity per event to skip it by.
		ctx, cancel := context.WithTimeout(r.Context(), appendTimeout)
		err := rc.o.Traffic.AppendTraffic(ctx, flows.Buckets())
		cancel()
		if err != nil {
			rc.o.Log.Warn("audit webhook: the traffic of a batch was not stored; the API server will retry it", "err", err, "events", len(list.Items))
			rc.refuse(w, http.StatusServiceUnavailable, RefusedUnavailable, retryUnavailable)
			return
		}
	}
	rc.c.writes.Add(int64(recorded))
	rc.c.received.Add(int64(len(list.Items)))
	rc.c.stored.Add(int64(added))
	rc.c.duplicate.Add(int64(len(entries) - added))
	rc.c.anonymousRefused.Add(int64(anonymous))
	rc.c.ignored.Add(int64(len(list.Items) - len(entries) - anonymous))
	w.WriteHeader(http.StatusOK)
}

// anonymousRefusal tells whether e is a write refused (401/403) to a client
// that did not authenticate: system:anonymous, a member of
// system:unauthenticated, or nobody (a failed authentication's event has no
// user, WithFailedAuthenticationAudit in
// k8s.io/apiserver/pkg/endpoints/filters/authn_audit.go). Anybody who reaches
// the API server can send those without limit; the ledger counts them
// (Counts.AnonymousRefused, the events metric) rather than keep each for the
// whole retention. The authenticated user decides, not an impersonated one:
// a user refused while impersonating system:anonymous is kept.
func anonymousRefusal(ev *auditv1.Event) bool {
	if code, _, _ := outcome(ev); code != http.StatusUnauthorized && code != http.StatusForbidden {
		return false
	}
	u := ev.User
	return u.Username == "" || u.Username == user.Anonymous || slices.Contains(u.Groups, user.AllUnauthenticated)
}

func (rc *Receiver) refuse(w http.ResponseWriter, code int, reason string, retryAfter int) {
	rc.c.refuse(reason)
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	http.Error(w, http.StatusText(code), code)
}
