package testcluster

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

// AdmissionReceiver is an admission webhook for the devcluster's API
// server: HTTPS on loopback, its certificate its own CA (CABundle), that
// admits every request and counts those it received by operation,
// namespace, name and user (ReceivedKey). Tests compare it with what the console
// says a webhook would be sent (the replay, internal/replay).
type AdmissionReceiver struct {
	URL      string
	CABundle []byte
	delay    time.Duration
	mu       sync.Mutex
	receipts []Receipt
}

// Receipt is one review the receiver answered: its ReceivedKey and the
// resourceVersion of the oldObject the API server sent ("" for a create).
// An update or delete whose storage write the API server retries is
// reviewed once per attempt, and an attempt made on a stale cached object
// carries that stale object: its OldResourceVersion is not the one the
// committed write replaced.
type Receipt struct {
	Key                string
	OldResourceVersion string
}

// ReceivedKey is the key Received counts a request under.
func ReceivedKey(op, namespace, name, user string) string {
	return op + " " + namespace + "/" + name + " by " + user
}

// NewAdmissionReceiver serves a receiver until the test ends.
func NewAdmissionReceiver(t testing.TB) *AdmissionReceiver {
	t.Helper()
	return NewSlowAdmissionReceiver(t, 0)
}

// NewSlowAdmissionReceiver serves a receiver that answers each review
// after delay: the API server holds the request's APF seat meanwhile, so
// requests it must call the receiver for take a known service time that
// costs the API server no CPU (the APF floods of internal/apfflood).
func NewSlowAdmissionReceiver(t testing.TB, delay time.Duration) *AdmissionReceiver {
	t.Helper()
	rc := &AdmissionReceiver{delay: delay}
	// httptest's certificate is for 127.0.0.1 and self-signed: its own CA.
	srv := httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	rc.CABundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return rc
}

func (rc *AdmissionReceiver) serve(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	rq := review.Request
	if rc.delay > 0 {
		select {
		case <-time.After(rc.delay):
		case <-r.Context().Done(): // the API server gave up (its webhook timeout)
			return
		}
	}
	key := ReceivedKey(string(rq.Operation), rq.Namespace, rq.Name, rq.UserInfo.Username)
	oldRV := oldResourceVersion(rq.OldObject.Raw)
	rc.mu.Lock()
	rc.receipts = append(rc.receipts, Receipt{Key: key, OldResourceVersion: oldRV})
	rc.mu.Unlock()
	review.Response = &admissionv1.AdmissionResponse{UID: rq.UID, Allowed: true}
	review.Request = nil
	_ = json.NewEncoder(w).Encode(review)
}

// oldResourceVersion is metadata.resourceVersion of a review's oldObject;
// "" when there is none.
func oldResourceVersion(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	return o.Metadata.ResourceVersion
}

// Receipts is every review the receiver answered so far, in order.
func (rc *AdmissionReceiver) Receipts() []Receipt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Receipt(nil), rc.receipts...)
}

// Received is how many requests of each key the receiver got so far.
func (rc *AdmissionReceiver) Received() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int{}
	for _, r := range rc.receipts {
		out[r.Key]++
	}
	return out
}
