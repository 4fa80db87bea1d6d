package csrpolicy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDecisionMessageRoundTrip(t *testing.T) {
	long := strings.Repeat("a", 243) + ".b-c.d9" // 250 characters, an object name
	cases := []struct {
		v     Version
		d     Decision
		words string
	}{
		{Version{"kubelet-serving", 3, ExpressionHash("request.username != ''")}, Approve, "the kubelet's own addresses"},
		{Version{"deny-x", 1, ExpressionHash("true")}, Deny, ""},
		{Version{long, 9223372036854775807, ExpressionHash("x")}, Deny, "words: with (parentheses) and policy y (generation 2, expression 000000000000)"},
		{Version{"p", 0, ExpressionHash("")}, Approve, "built in a test"},
	}
	for _, c := range cases {
		msg := DecisionMessage(c.v, c.d, c.words)
		d, v, words, ok := ParseDecisionMessage(msg)
		if !ok || d != c.d || v != c.v || words != c.words {
			t.Errorf("%q parsed as %v %+v %q %v", msg, d, v, words, ok)
		}
		// The trace is found inside a longer message too (the ledger's
		// "<reason>: <message>", a person following a policy).
		if v, ok := ParseVersion("ClusterdeskPolicy: Approved by alice via clusterdesk: following " + VersionText(c.v) + " (shadow)"); !ok || v != c.v {
			t.Errorf("inside a longer message: %+v %v, want %+v", v, ok, c.v)
		}
	}
	if got := DecisionMessage(cases[0].v, Approve, "w"); got != "approved by policy kubelet-serving (generation 3, expression "+cases[0].v.Hash+"): w" {
		t.Errorf("format: %q", got)
	}
	for _, bad := range []string{"", "policy x: old format", "approved by policy X (generation 1, expression 0123456789ab)",
		"approved by policy x (generation 1, expression 0123456789a)", "approved by policy x (generation -1, expression 0123456789ab)",
		"approved by policy x (generation 1, expression 0123456789ab)trailing", "Approved by alice via clusterdesk: ok"} {
		if d, v, w, ok := ParseDecisionMessage(bad); ok {
			t.Errorf("%q parsed as %v %+v %q", bad, d, v, w)
		}
	}
}

func TestExpressionHashIsOfTheCanonicalText(t *testing.T) {
	a := ExpressionHash("request.username == 'x'")
	if len(a) != HashLen {
		t.Fatalf("hash %q", a)
	}
	for _, same := range []string{"request.username == 'x'\n", "  request.username == 'x'\r\n", "\nrequest.username == 'x'"} {
		if ExpressionHash(same) != a {
			t.Errorf("%q hashes apart from its canonical text", same)
		}
	}
	for _, other := range []string{"request.username == 'x '", "request.username=='x'", "request.username == 'y'"} {
		if ExpressionHash(other) == a {
			t.Errorf("%q hashes as another expression", other)
		}
	}
}

func TestVerdictCarriesTheVersion(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy",
		"metadata": map[string]any{"name": "p", "generation": int64(4)},
		"spec":     map[string]any{"signerNames": []any{"example.com/x"}, "decision": "Approve", "expression": "true\n"},
	}}
	e := CompileObject(u)
	if e.Err != nil {
		t.Fatal(e.Err)
	}
	want := Version{Policy: "p", Generation: 4, Hash: ExpressionHash("true")}
	if e.Program.Version() != want {
		t.Fatalf("program version %+v, want %+v", e.Program.Version(), want)
	}
	v := e.Program.evaluate(t.Context(), map[string]any{"request": map[string]any{}, "node": nil})
	if !v.Matched || v.Version != want {
		t.Errorf("verdict %+v, want the version %+v", v, want)
	}
}
