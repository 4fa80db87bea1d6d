package seed

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDecodeMultiDocumentAndFlowStyle(t *testing.T) {
	data, err := os.ReadFile("testdata/webhooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("decoded %d objects, want 2 (the comment-only document is skipped)", len(objs))
	}
	if objs[1].GetKind() != "FlowSchema" || objs[1].GetName() != "kyaml-style" {
		t.Errorf("second object = %s %s, want FlowSchema kyaml-style", objs[1].GetKind(), objs[1].GetName())
	}
}

func TestIgnoreWebhookFailures(t *testing.T) {
	data, err := os.ReadFile("testdata/webhooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := ignoreWebhookFailures(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	// One explicit Fail and one unset (which the API defaults to Fail).
	if changed != 2 {
		t.Errorf("changed %d webhooks, want 2", changed)
	}
	webhooks, _, _ := unstructured.NestedSlice(objs[0].Object, "webhooks")
	for _, w := range webhooks {
		if got := w.(map[string]any)["failurePolicy"]; got != "Ignore" {
			t.Errorf("webhook %v failurePolicy = %v", w.(map[string]any)["name"], got)
		}
	}
	if changed, err := ignoreWebhookFailures(objs[1]); err != nil || changed != 0 {
		t.Errorf("FlowSchema: changed %d, err %v; want untouched", changed, err)
	}
}
