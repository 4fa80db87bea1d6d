package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// webhookKind is one of the two webhook configuration kinds a replay
// page serves.
type webhookKind struct {
	id      kube.KindID
	apiKind string // "ValidatingWebhookConfiguration"
	route   string
	href    func(name string) string
}

var (
	validatingKind = webhookKind{kube.Webhooks, "ValidatingWebhookConfiguration", urls.ValidatingWebhookReplayRoute, urls.ValidatingWebhookReplay}
	mutatingKind   = webhookKind{kube.MutatingWebhooks, "MutatingWebhookConfiguration", urls.MutatingWebhookReplayRoute, urls.MutatingWebhookReplay}
)

// parseWebhookDraft reads the form's text: one configuration of k's kind,
// as YAML. Unknown fields are errors, as the API server's strict field
// validation makes them: a misspelt selector would otherwise replay as
// absent, and select everything.
func parseWebhookDraft(k webhookKind, text string) (engine.WebhookConfig, error) {
	var c engine.WebhookConfig
	if strings.TrimSpace(text) == "" {
		return c, fmt.Errorf("the draft is empty; it is a %s", k.apiKind)
	}
	// The YAML library reads the first document alone: a second one would
	// be dropped without a word.
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	for docs := 0; ; {
		d, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, fmt.Errorf("the draft is not YAML: %v", err)
		}
		if strings.TrimSpace(string(d)) != "" {
			if docs++; docs > 1 {
				return c, fmt.Errorf("the draft has more than one document; replay one %s", k.apiKind)
			}
		}
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(text), &tm); err != nil {
		return c, fmt.Errorf("the draft is not YAML: %v", err)
	}
	if tm.APIVersion != apiVersion || tm.Kind != k.apiKind {
		return c, fmt.Errorf("the draft is a %q of %q; this page replays one %s of %s", tm.Kind, tm.APIVersion, k.apiKind, apiVersion)
	}
	var obj any
	if k.apiKind == validatingKind.apiKind {
		c.Validating = &admissionregistrationv1.ValidatingWebhookConfiguration{}
		obj = c.Validating
	} else {
		c.Mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
		obj = c.Mutating
	}
	// UnmarshalStrict also refuses a second document's keys run together
	// and duplicate fields.
	if err := yaml.UnmarshalStrict([]byte(text), obj); err != nil {
		return c, fmt.Errorf("the draft %s: %v", k.apiKind, err)
	}
	if c.Name() == "" {
		return c, fmt.Errorf("the draft %s has no metadata.name", k.apiKind)
	}
	return c, nil
}

// deployedWebhooks is what the cluster runs under the draft's name, from
// the shared cache, and its words; nil when there is none (every request
// the draft sends is then newly sent).
func deployedWebhooks(c ports.Cluster, k webhookKind, draft engine.WebhookConfig) (*engine.WebhookConfig, string) {
	o, err := c.Get(k.id, draft.Name())
	var dep engine.WebhookConfig
	switch x := o.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		dep.Validating = x
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		dep.Mutating = x
	}
	if err != nil || dep.Name() == "" {
		return nil, fmt.Sprintf("Compared with nothing: the cluster has no %s %q, so every request the draft sends is newly sent.", k.apiKind, draft.Name())
	}
	return &dep, fmt.Sprintf("Compared with the deployed %s %q.", k.apiKind, dep.Name())
}

// deployedWebhooksText is the form's starting text: the deployed
// configuration without what the API server sets.
func deployedWebhooksText(o any, k webhookKind) (string, error) {
	switch x := o.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		c := x.DeepCopy()
		c.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: k.apiKind}
		c.ObjectMeta = metav1.ObjectMeta{Name: c.Name, Labels: c.Labels}
		return draftYAML(c)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		c := x.DeepCopy()
		c.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: k.apiKind}
		c.ObjectMeta = metav1.ObjectMeta{Name: c.Name, Labels: c.Labels}
		return draftYAML(c)
	}
	return "", fmt.Errorf("not a %s", k.apiKind)
}
