package csrpolicy

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func memoObject(uid, rv, expression string) *unstructured.Unstructured {
	meta := map[string]any{"name": "p"}
	if uid != "" {
		meta["uid"], meta["resourceVersion"] = uid, rv
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": meta,
		"spec": map[string]any{"signerNames": []any{"example.com/*"}, "expression": expression, "decision": "Approve"},
	}}
}

// One object version is compiled once for every reader (the Set's
// generations and the policies' pages); a new version, and an object that
// cannot be told apart (no UID), are compiled again.
func TestCompileObjectOncePerVersion(t *testing.T) {
	first := CompileObject(memoObject("uid-memo", "7", "true"))
	if first.Err != nil || first.Program == nil {
		t.Fatalf("compile: %v", first.Err)
	}
	if again := CompileObject(memoObject("uid-memo", "7", "true")); again.Program != first.Program {
		t.Error("the same version was compiled again")
	}
	if set := CompileAll(3, []*unstructured.Unstructured{memoObject("uid-memo", "7", "true")}); set.Policies[0].Program != first.Program {
		t.Error("a Set's generation compiled again what a page had compiled")
	}
	next := CompileObject(memoObject("uid-memo", "8", "false"))
	if next.Program == first.Program || next.Policy.Expression != "false" {
		t.Errorf("a new resourceVersion kept the old compilation (expression %q)", next.Policy.Expression)
	}
	a, b := CompileObject(memoObject("", "", "true")), CompileObject(memoObject("", "", "false"))
	if a.Program == b.Program || b.Policy.Expression != "false" {
		t.Error("objects without a UID share a compilation")
	}
}
