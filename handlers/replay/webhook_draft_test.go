package replay

import (
	"strings"
	"testing"
)

const webhookDoc = `apiVersion: admissionregistration.k8s.io/v1
kind: %s
metadata: {name: c}
webhooks:
- name: a.example.com
  clientConfig: {url: "https://127.0.0.1/a"}
  sideEffects: None
  admissionReviewVersions: [v1]
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
`

func doc(kind string) string { return strings.Replace(webhookDoc, "%s", kind, 1) }

// TestParseWebhookDraftReadsOneConfigurationOfThePagesKind: the page's kind
// reads into its half of the config; the other kind, a misspelt field, a
// missing name or text that is not YAML is an error naming it.
func TestParseWebhookDraftReadsOneConfigurationOfThePagesKind(t *testing.T) {
	v, err := parseWebhookDraft(validatingKind, doc("ValidatingWebhookConfiguration"))
	if err != nil || v.Validating == nil || v.Mutating != nil || v.Name() != "c" || len(v.Validating.Webhooks[0].Rules) != 1 {
		t.Fatalf("validating: %v %+v", err, v)
	}
	m, err := parseWebhookDraft(mutatingKind, doc("MutatingWebhookConfiguration"))
	if err != nil || m.Mutating == nil || m.Validating != nil || m.Name() != "c" {
		t.Fatalf("mutating: %v %+v", err, m)
	}
	for _, c := range []struct {
		k          webhookKind
		text, want string
	}{
		{validatingKind, doc("MutatingWebhookConfiguration"), "this page replays one ValidatingWebhookConfiguration"},
		{mutatingKind, doc("ValidatingWebhookConfiguration"), "this page replays one MutatingWebhookConfiguration"},
		{validatingKind, strings.Replace(doc("ValidatingWebhookConfiguration"), "rules:", "rulez:", 1), "rulez"},
		{validatingKind, strings.Replace(doc("ValidatingWebhookConfiguration"), "metadata: {name: c}", "metadata: {}", 1), "no metadata.name"},
		{validatingKind, "webhooks: [", "not YAML"},
		{validatingKind, "  \n", "empty"},
		{validatingKind, doc("ValidatingWebhookConfiguration") + "---\n" + doc("ValidatingWebhookConfiguration"), "more than one document"},
	} {
		if _, err := parseWebhookDraft(c.k, c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to say %q", err, c.want)
		}
	}
}
