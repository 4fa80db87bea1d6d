// Package livetest is test support for the live updates (handlers/live) and
// the console's tests that drive them (handlers): a shared cache holding a
// few CSRs, CSRs as the API server would hold them, and readers of the
// fragments a batch of changes renders.
package livetest

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// Cluster is a cache holding a few CSRs, every kind synced unless told
// otherwise (SetState). A test changes Requests under Mu.
type Cluster struct {
	ports.Cluster
	Mu       sync.Mutex
	Requests map[string]*certificatesv1.CertificateSigningRequest
	states   map[kube.KindID]kube.KindStatus
}

// NewCluster holds a pending CSR per name, at resourceVersion "7".
func NewCluster(names ...string) *Cluster {
	c := &Cluster{Requests: map[string]*certificatesv1.CertificateSigningRequest{}, states: map[kube.KindID]kube.KindStatus{}}
	for _, n := range names {
		c.Requests[n] = &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: n, CreationTimestamp: metav1.Now(), ResourceVersion: "7"},
			Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/live", Username: "tester"},
		}
	}
	return c
}

// The fake holds CSRs only: no CRD or webhook configuration (the home
// page's attention section reads them).
func (c *Cluster) CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) { return nil, nil }
func (c *Cluster) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, nil
}
func (c *Cluster) MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, nil
}

func (c *Cluster) Ready() bool           { return true }
func (c *Cluster) ServerVersion() string { return "v1.36.3" }

func (c *Cluster) Kind(id kube.KindID) (kube.Kind, bool) {
	for _, k := range kube.AllKinds() {
		if k.ID == id {
			return k, true
		}
	}
	return kube.Kind{}, false
}

func (c *Cluster) Status(id kube.KindID) kube.KindStatus {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	k, _ := c.Kind(id)
	if st, ok := c.states[id]; ok {
		st.Kind = k
		return st
	}
	n := 0
	if id == kube.CSRs {
		n = len(c.Requests)
	}
	return kube.KindStatus{Kind: k, State: kube.StateSynced, Count: n, SyncedAt: time.Now()}
}

func (c *Cluster) Statuses() []kube.KindStatus {
	var out []kube.KindStatus
	for _, k := range kube.AllKinds() {
		out = append(out, c.Status(k.ID))
	}
	return out
}

func (c *Cluster) CSR(name string) (*certificatesv1.CertificateSigningRequest, error) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if o, ok := c.Requests[name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, name)
}

func (c *Cluster) CSRs() ([]*certificatesv1.CertificateSigningRequest, error) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	out := make([]*certificatesv1.CertificateSigningRequest, 0, len(c.Requests))
	for _, o := range c.Requests {
		out = append(out, o)
	}
	return out, nil
}

// SetState makes the cache report st for kind id from now on.
func (c *Cluster) SetState(id kube.KindID, st kube.KindStatus) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.states[id] = st
}

func (c *Cluster) Meta(id kube.KindID, name string) (metav1.Object, error) {
	if id != kube.CSRs {
		return nil, fmt.Errorf("no %s in this cache", id)
	}
	return c.CSR(name)
}

// Get finds no object of the kinds Cluster does not hold (its policies'
// live rows are removed rows).
func (c *Cluster) Get(id kube.KindID, name string) (runtime.Object, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: string(id)}, name)
}

// CSR is a request of user to signer, created at created, with a real
// PKCS#10 request and the conditions conds (each true).
func CSR(t testing.TB, name, signer, user string, created time.Time, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: UID(name), CreationTimestamp: metav1.NewTime(created)},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: signer, Username: user, Request: testfixtures.SubjectPEM(t, user),
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	for _, ty := range conds {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: ty, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(created)})
	}
	return c
}

// UID is a fixed UUID per name, as the API server would give a CSR.
func UID(name string) types.UID {
	h := fnv.New64a()
	h.Write([]byte(name))
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", h.Sum64()&(1<<48-1)))
}

// Ref is the queue's selection value of the CSR named name (as CSR makes it).
func Ref(name string) string { return string(UID(name)) + "/" + name }

// Doc parses a rendered fragment.
func Doc(t *testing.T, data []byte) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ByEvent keys a batch's messages by their event name.
func ByEvent(msgs []live.Message) map[string]live.Message {
	out := map[string]live.Message{}
	for _, m := range msgs {
		out[m.Event] = m
	}
	return out
}
