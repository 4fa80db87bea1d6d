package edit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
)

// Example returns a minimal valid object of kind (the API kind, "FlowSchema")
// at apiVersion, for the create page. Every name contains "example" so that a
// person sees at once what to change. ok is false for a kind without an example.
func Example(kind, apiVersion string) (text string, ok bool, err error) {
	body, ok := examples[kind]
	if !ok {
		return "", false, nil
	}
	if kind == "CertificateSigningRequest" {
		req, err := exampleCSR()
		if err != nil {
			return "", true, err
		}
		body = strings.Replace(body, "REQUEST", req, 1)
	}
	return "apiVersion: " + apiVersion + "\nkind: " + kind + "\n" + body, true, nil
}

// examples are the objects after apiVersion and kind. Each is accepted by the API
// server as it is, and is harmless there: the webhook matches no namespace, the
// FlowSchema only a user that does not exist.
var examples = map[string]string{
	// Decides nothing: it names a signer nobody uses.
	"CSRApprovalPolicy": `metadata:
  name: example-policy
spec:
  signerNames: ["example.com/nobody"]
  decision: Approve
  reason: ExamplePolicy
  message: approved by the example policy
  expression: |
    request.username == "system:serviceaccount:example:nobody"
`,
	"CustomResourceDefinition": `metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
                minimum: 1
`,
	"CSIDriver": `metadata:
  name: example.csi.clusterdesk.io
spec:
  attachRequired: false
  podInfoOnMount: false
  volumeLifecycleModes:
  - Persistent
`,
	"FlowSchema": `metadata:
  name: example-flowschema
spec:
  priorityLevelConfiguration:
    name: global-default
  matchingPrecedence: 9000
  distinguisherMethod:
    type: ByUser
  rules:
  - subjects:
    - kind: User
      user:
        name: example-user
    resourceRules:
    - verbs: ["get", "list"]
      apiGroups: [""]
      resources: ["configmaps"]
      namespaces: ["*"]
`,
	"PriorityLevelConfiguration": `metadata:
  name: example-priority-level
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 5
    limitResponse:
      type: Reject
`,
	"ValidatingWebhookConfiguration": `metadata:
  name: example-webhook
webhooks:
- name: check.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Ignore
  timeoutSeconds: 5
  clientConfig:
    url: https://webhook.example.com/validate
  namespaceSelector:
    matchLabels:
      example.com/validate: "true"
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["configmaps"]
    scope: Namespaced
`,
	// The admission policy kinds and the mutating webhook configuration match
	// only namespaces labelled example.com/validate=true, and the binding
	// warns rather than denies.
	"ValidatingAdmissionPolicy": `metadata:
  name: example-policy
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector:
      matchLabels:
        example.com/validate: "true"
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["configmaps"]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: a ConfigMap needs a team label
`,
	"ValidatingAdmissionPolicyBinding": `metadata:
  name: example-policy-binding
spec:
  policyName: example-policy
  validationActions: ["Warn"]
`,
	"MutatingWebhookConfiguration": `metadata:
  name: example-mutating-webhook
webhooks:
- name: mutate.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Ignore
  reinvocationPolicy: Never
  timeoutSeconds: 5
  clientConfig:
    url: https://webhook.example.com/mutate
  namespaceSelector:
    matchLabels:
      example.com/validate: "true"
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["configmaps"]
    scope: Namespaced
`,
	"CertificateSigningRequest": `metadata:
  name: example-csr
spec:
  # A request generated for this example; its private key was thrown away.
  # Paste the base64 of your own PEM certificate request here.
  request: REQUEST
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages:
  - client auth
`,
}

// exampleCSR makes a PKCS#10 request for CN=example-user, base64 of its PEM.
func exampleCSR() (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("example CSR key: %w", err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "example-user", Organization: []string{"example"}},
	}, key)
	if err != nil {
		return "", fmt.Errorf("example CSR: %w", err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), nil
}
