package editor

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// checkPolicy refuses a CSRApprovalPolicy that would not run, before it is
// sent: its CRD's schema takes any string as the expression, so the API
// server would store CEL that does not compile, and the policy would only
// fail where it is evaluated (the approver, the shadow verdicts). The error
// points at the expression's line in the text, CEL's own line within it.
func checkPolicy(k kube.Kind, obj *unstructured.Unstructured, text string) error {
	if k.Resource+"."+k.Group != csrpolicy.CRD {
		return nil
	}
	pol, err := csrpolicy.FromObject(obj)
	if err == nil {
		_, err = csrpolicy.Compile(pol)
	}
	if err == nil {
		return nil
	}
	in := &edit.InputError{Title: "The policy would not run", Message: err.Error()}
	var ce *csrpolicy.CompileError
	if !errors.As(err, &ce) {
		in.Line = edit.Locate(text, "spec")
		return in
	}
	field := map[string]string{"expression": "spec.expression", "decision": "spec.decision", "signerNames": "spec.signerNames"}[ce.Field]
	key := edit.Locate(text, field)
	in.Line = key
	if n := ce.ExpressionLine(); n > 0 && key > 0 {
		in.Line = key + n - 1
		if blockScalar(text, key) {
			in.Line++ // the expression starts on the line after "expression: |"
		}
	}
	return in
}

// blockScalar reports whether the 1-based line of text ends its key with a
// YAML block scalar indicator (| or >, with chomping or indentation marks).
func blockScalar(text string, line int) bool {
	lines := strings.Split(text, "\n")
	if line < 1 || line > len(lines) {
		return false
	}
	_, value, ok := strings.Cut(lines[line-1], ":")
	value = strings.TrimSpace(value)
	return ok && value != "" && strings.ContainsRune("|>", rune(value[0]))
}
