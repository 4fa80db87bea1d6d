package editor

import (
	"errors"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

var policyKind = kube.Kind{Group: "clusterdesk.io", Version: "v1alpha1", Resource: "csrapprovalpolicies", Singular: "CSRApprovalPolicy"}

func policyText(expression string) string {
	return `apiVersion: clusterdesk.io/v1alpha1
kind: CSRApprovalPolicy
metadata:
  name: p
spec:
  signerNames: [kubernetes.io/kubelet-serving]
  decision: Approve
  reason: R
` + expression
}

// TestCheckPolicyPointsAtCELsLine: an expression that does not compile is
// refused before anything is sent, at its line in the text, for a block
// scalar and a one-line expression; a good policy and other kinds pass.
func TestCheckPolicyPointsAtCELsLine(t *testing.T) {
	for _, tc := range []struct {
		name, expression string
		line             int // 0: accepted
	}{
		{"block scalar, second line", "  expression: |\n    request.username != '' &&\n    request.nosuch()\n", 11},
		{"block scalar, first line", "  expression: |-\n    request.nosuch()\n", 10},
		{"one line", "  expression: \"request.nosuch()\"\n", 9},
		{"not a bool", "  expression: \"1 + 2\"\n", 9},
		{"good", "  expression: |\n    request.username.startsWith('system:node:')\n", 0},
	} {
		text := policyText(tc.expression)
		obj, err := edit.Parse(text, edit.Target{APIVersion: "clusterdesk.io/v1alpha1", Kind: "CSRApprovalPolicy"})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err = checkPolicy(policyKind, obj, text)
		var in *edit.InputError
		switch {
		case tc.line == 0 && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.line != 0 && (!errors.As(err, &in) || in.Line != tc.line || !strings.Contains(in.Message, "expression")):
			t.Errorf("%s: %v (line %d), want an input error at line %d", tc.name, err, lineOf(in), tc.line)
		}
	}
	// Another kind's text is not a policy's business.
	text := policyText("  expression: nonsense(\n")
	obj, _ := edit.Parse(text, edit.Target{APIVersion: "clusterdesk.io/v1alpha1", Kind: "CSRApprovalPolicy"})
	if err := checkPolicy(kube.Kind{Group: "example.com", Resource: "widgets"}, obj, text); err != nil {
		t.Errorf("another kind: %v", err)
	}
}

func lineOf(in *edit.InputError) int {
	if in == nil {
		return -1
	}
	return in.Line
}
