package kube

import (
	"encoding/json"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
)

// flowcontrol v1beta3 and v1 are field-for-field the same schema; the one difference is
// that v1 made nominalConcurrencyShares a pointer (so that 0 can mean 0). A JSON round
// trip is therefore a complete conversion, and it needs no k8s.io/kubernetes internals.
// Objects read from the API server are already defaulted, so no v1beta3 defaulting
// (0 shares → 30) is needed here.
//
// The converted objects keep an empty TypeMeta, like every object client-go decodes
// into a typed struct: a v1 Go type labelled v1beta3 (or v1 when the server never
// said so) would mislead. The served version is Cache.Kind(id).Version.

// flowSchemaV1 converts a v1beta3 FlowSchema to v1.
func flowSchemaV1(in *flowcontrolv1beta3.FlowSchema) (*flowcontrolv1.FlowSchema, error) {
	out := &flowcontrolv1.FlowSchema{}
	if err := convertJSON(in, out); err != nil {
		return nil, fmt.Errorf("convert FlowSchema %q from v1beta3 to v1: %w", in.Name, err)
	}
	return out, nil
}

// priorityLevelV1 converts a v1beta3 PriorityLevelConfiguration to v1.
func priorityLevelV1(in *flowcontrolv1beta3.PriorityLevelConfiguration) (*flowcontrolv1.PriorityLevelConfiguration, error) {
	out := &flowcontrolv1.PriorityLevelConfiguration{}
	if err := convertJSON(in, out); err != nil {
		return nil, fmt.Errorf("convert PriorityLevelConfiguration %q from v1beta3 to v1: %w", in.Name, err)
	}
	return out, nil
}

func convertJSON(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
