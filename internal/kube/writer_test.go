package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// csrServer is a minimal API server for one CSR: GET it, PUT its /approval. It sends a
// Warning header on every response, and can make the next PUT lose a race. Like the
// API server, it refuses a PUT whose metadata.uid is set and differs from the CSR's.
type csrServer struct {
	mu       sync.Mutex
	csr      certificatesv1.CertificateSigningRequest
	puts     int
	sentUIDs []types.UID                                        // metadata.uid of each PUT body
	raceWith *certificatesv1.CertificateSigningRequestCondition // applied instead of the next PUT, which gets 409
}

func (s *csrServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	const base = "/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Add("Warning", `299 - "certificates.k8s.io: `+r.Method+` seen"`)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == base:
	case r.Method == http.MethodPut && r.URL.Path == base+"/approval":
		s.puts++
		if s.raceWith != nil {
			s.csr.Status.Conditions = append(s.csr.Status.Conditions, *s.raceWith)
			s.raceWith = nil
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(apierrors.NewConflict(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"},
				"csr-1", nil).Status())
			return
		}
		// client-go sends built-in types as protobuf; the universal deserializer reads either.
		body, _ := io.ReadAll(r.Body)
		in, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sent := in.(*certificatesv1.CertificateSigningRequest)
		s.sentUIDs = append(s.sentUIDs, sent.UID)
		if sent.UID != "" && sent.UID != s.csr.UID {
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(apierrors.NewConflict(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"},
				"csr-1", fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", sent.UID, s.csr.UID)).Status())
			return
		}
		s.csr.Status = sent.Status
	default:
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(&s.csr)
}

func newCSRServer(t *testing.T) (*csrServer, *Writer) {
	t.Helper()
	s := &csrServer{csr: certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1", UID: seenUID, ResourceVersion: "1"}}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	w, err := NewWriter(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return s, w
}

func TestDecideCSR(t *testing.T) {
	s, w := newCSRServer(t)
	ctx := context.Background()

	warnings, err := w.DecideCSR(ctx, "csr-1", seenUID, true, "", "looks right")
	if err != nil {
		t.Fatal(err)
	}
	conds := s.csr.Status.Conditions
	if len(conds) != 1 || conds[0].Type != certificatesv1.CertificateApproved || conds[0].Status != corev1.ConditionTrue ||
		conds[0].Reason != ReasonApproved || conds[0].Message != "looks right" || conds[0].LastUpdateTime.IsZero() {
		t.Fatalf("conditions after approve: %+v", conds)
	}
	if want := []string{"certificates.k8s.io: GET seen", "certificates.k8s.io: PUT seen"}; strings.Join(warnings, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", warnings, want)
	}

	_, err = w.DecideCSR(ctx, "csr-1", seenUID, false, "Nope", "")
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "already approved") {
		t.Fatalf("deny after approve: %v, want a Conflict saying it is already approved", err)
	}
	if s.puts != 1 || len(s.csr.Status.Conditions) != 1 {
		t.Fatalf("a refused decision must not write: %d PUTs, conditions %+v", s.puts, s.csr.Status.Conditions)
	}
}

// A decision that loses a race to another one is re-read and refused, not applied twice.
func TestDecideCSRLosesRace(t *testing.T) {
	s, w := newCSRServer(t)
	s.raceWith = &certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "Other"}

	_, err := w.DecideCSR(context.Background(), "csr-1", seenUID, true, "Mine", "")
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "already denied") {
		t.Fatalf("approve racing a denial: %v, want a Conflict saying it is already denied", err)
	}
	if len(s.csr.Status.Conditions) != 1 || s.csr.Status.Conditions[0].Reason != "Other" {
		t.Fatalf("conditions: %+v", s.csr.Status.Conditions)
	}
}

const seenUID types.UID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

// A CSR deleted and created again under its name since it was reviewed: the
// write carries the reviewed UID (not the one just read), the refusal becomes
// a ReplacedError with the live object, and it is not retried.
func TestDecideCSRRefusesAReplacedCSR(t *testing.T) {
	s, w := newCSRServer(t)
	s.csr.UID = "11111111-2222-4333-8444-555555555555"
	s.csr.Spec.Username = "the-new-one"

	_, err := w.DecideCSR(context.Background(), "csr-1", seenUID, true, "", "")
	var replaced *ReplacedError
	if !errors.As(err, &replaced) || !apierrors.IsConflict(err) {
		t.Fatalf("err = %v, want a *ReplacedError unwrapping to a Conflict", err)
	}
	if replaced.Seen != seenUID || replaced.Current.UID != s.csr.UID || replaced.Current.Spec.Username != "the-new-one" ||
		len(replaced.Current.Status.Conditions) != 0 {
		t.Errorf("ReplacedError = %+v, want the reviewed UID and the live object as read", replaced)
	}
	if s.puts != 1 || len(s.sentUIDs) != 1 || s.sentUIDs[0] != seenUID {
		t.Errorf("%d PUTs with UIDs %v, want one carrying the reviewed UID", s.puts, s.sentUIDs)
	}
	if len(s.csr.Status.Conditions) != 0 {
		t.Errorf("nothing is written: %+v", s.csr.Status.Conditions)
	}
	if _, err := w.DecideCSR(context.Background(), "csr-1", "", true, "", ""); err == nil || s.puts != 1 {
		t.Errorf("no UID: err %v after %d PUTs, want a refusal before any request", err, s.puts)
	}
}
