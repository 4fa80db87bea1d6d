package apfflood

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// Precedence is the matchingPrecedence of Setup's FlowSchema: before every
// suggested FlowSchema a user in system:authenticated would match
// (global-default, 9900) and after the mandatory ones (exempt 1,
// catch-all 10000 is last anyway).
const Precedence = 500

// configWait bounds how long an instance may take to apply a change: its
// APF controller reads FlowSchemas and levels through an informer, so
// every instance sees a change within a second or two.
const configWait = 30 * time.Second

// Setup creates the PriorityLevelConfiguration name with spec pl and the
// FlowSchema name that sends every request of user (kind User: the user's
// own requests, whatever its groups) to it, one flow per user
// (distinguisher ByUser), and waits until every API server instance
// classifies user's requests into it. Both are deleted when the test ends.
func Setup(t testing.TB, cfg *rest.Config, name string, pl flowcontrolv1.PriorityLevelConfigurationSpec, user string) {
	t.Helper()
	ctx := context.Background()
	fc := testcluster.NewFlowcontrol(t, cfg)
	level := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: pl}
	if err := fc.CreatePriorityLevel(ctx, level); err != nil {
		t.Fatalf("create priority level %s: %v", name, err)
	}
	t.Cleanup(func() { _ = fc.DeletePriorityLevel(context.Background(), name) })
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: name},
			MatchingPrecedence:         Precedence,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"},
				}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	if err := fc.CreateFlowSchema(ctx, fs); err != nil {
		t.Fatalf("create FlowSchema %s: %v", name, err)
	}
	// Deleted first (cleanups run last in, first out): a FlowSchema without
	// its level would be dangling meanwhile.
	t.Cleanup(func() { _ = fc.DeleteFlowSchema(context.Background(), name) })
	waitClassified(t, cfg, fc, user, name)
}

// Move points Setup's FlowSchema name at the priority level level (the
// what-if's draft, applied for real) and waits until every instance
// classifies user's requests into level.
func Move(t testing.TB, cfg *rest.Config, name, level, user string) {
	t.Helper()
	fc := testcluster.NewFlowcontrol(t, cfg)
	if err := fc.SetFlowSchemaLevel(context.Background(), name, level); err != nil {
		t.Fatalf("move FlowSchema %s to %s: %v", name, level, err)
	}
	waitClassified(t, cfg, fc, user, level)
}

// waitClassified waits until every instance answers a request of user with
// the UID of the level in the header APF sets on every request it
// classifies (ResponseHeaderMatchedPriorityLevelConfigurationUID,
// k8s.io/apiserver/pkg/server/filters/priority-and-fairness.go): each
// instance applies configuration on its own, and the answer of one is no
// evidence about another. The probe is GET /version, which every
// authenticated user may read (system:public-info-viewer): a test that
// counts the user's flood by verb and resource does not count the probes.
func waitClassified(t testing.TB, cfg *rest.Config, fc *testcluster.Flowcontrol, user, level string) {
	t.Helper()
	ctx := context.Background()
	uid, err := fc.PriorityLevelUID(ctx, level)
	if err != nil {
		t.Fatalf("priority level %s: %v", level, err)
	}
	for _, a := range testcluster.APIServers(t, 1) {
		hc := impersonating(t, cfg, a, user)
		deadline := time.Now().Add(configWait)
		var got string
		for {
			got, err = levelUID(ctx, hc, a.Server+"/version")
			if err == nil && got == uid {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %v, API server %s still classifies %s into the level of UID %q (error %v), not into %s (UID %s)",
					configWait, a.Server, user, got, err, level, uid)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func levelUID(ctx context.Context, hc *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID), nil
}

// impersonating is an HTTP client to instance a that authenticates as
// cfg's identity and impersonates user in system:authenticated (not
// system:masters: the exempt FlowSchema matches that group before any
// other). It has no client-side rate limit (rest.HTTPClientFor leaves the
// limiter to the REST client), so it sends what it is asked to.
func impersonating(t testing.TB, cfg *rest.Config, a testcluster.APIServer, user string) *http.Client {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Host = a.Server
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

// Instance is how the recorded traffic names instance a (the audit
// webhook's /apiservers/<host:port>, TrafficSeries.Instance).
func Instance(a testcluster.APIServer) string { return strings.TrimPrefix(a.Server, "https://") }

// Limited is a Limited priority level's spec: shares nominal seats'
// worth, lending and borrowing nothing, queuing with queues queues of
// queueLength requests each and the given hand size.
func Limited(shares, queues, handSize, queueLength int32) flowcontrolv1.PriorityLevelConfigurationSpec {
	return flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To(shares),
			LendablePercent:          ptr.To[int32](0),
			BorrowingLimitPercent:    ptr.To[int32](0),
			LimitResponse: flowcontrolv1.LimitResponse{
				Type: flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{
					Queues: queues, HandSize: handSize, QueueLengthLimit: queueLength,
				},
			},
		},
	}
}
