package whatif

import (
	"strings"
	"testing"
)

func TestParseDraftReadsFlowSchemasAndLevelsAndNamesTheBadDocument(t *testing.T) {
	good := `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: own}
spec: {type: Limited, limited: {nominalConcurrencyShares: 10, limitResponse: {type: Reject}}}
---
# a comment only
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: fs}
spec: {priorityLevelConfiguration: {name: own}, matchingPrecedence: 100}
`
	cfg, objs, err := parseDraft(good)
	if err != nil || len(cfg.Levels) != 1 || len(cfg.FlowSchemas) != 1 || len(objs) != 2 || objs[1].n != 3 {
		t.Fatalf("%v %+v %v", err, cfg, objs)
	}
	if cfg, objs, err := parseDraft("  \n"); err != nil || len(objs) != 0 || len(cfg.FlowSchemas) != 0 {
		t.Errorf("empty draft: %v", err)
	}
	for _, c := range []struct{ text, want string }{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", `document 1 is a "ConfigMap"`},
		{"apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\nmetadata: {name: x}\n", `document 1 (FlowSchema): apiVersion "flowcontrol.apiserver.k8s.io/v1beta3"`},
		{good + "---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: fs}\nspec: {sharez: 1}\n", `document 4 (FlowSchema): error unmarshaling JSON`},
		{good + "---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: fs}\n", `documents 3 and 4 are both the FlowSchema "fs"`},
		{"apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\n", `document 1 (FlowSchema) has no metadata.name`},
		{"kind: [", "not YAML"},
	} {
		if _, _, err := parseDraft(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
