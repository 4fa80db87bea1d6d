package crd

import (
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/admission"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

const widgets = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd], categories: [all], listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.size, labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size, description: replicas}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
    selectableFields:
    - jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        description: A widget.
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - {rule: "self.size <= 10", message: "at most 10", reason: FieldValueInvalid, fieldPath: .size}
            oneOf:
            - required: [color]
            - required: [pattern]
            properties:
              size: {type: integer, minimum: 1, maximum: 10, exclusiveMaximum: true, default: 1}
              color: {type: string, enum: [red, green], pattern: "^[a-z]+$", maxLength: 8}
              pattern: {type: string}
              port: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
              labels: {type: object, additionalProperties: {type: string}, x-kubernetes-map-type: granular}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                maxItems: 5
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
              tags: {type: array, items: {type: string}, uniqueItems: true}
              template: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}
              anything: {x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            nullable: true
  - name: v1beta1
    served: false
    storage: false
    deprecated: true
    schema:
      openAPIV3Schema: {type: object}
status:
  storedVersions: [v1]
  conditions:
  - {type: Established, status: "True"}
  - {type: NamesAccepted, status: "True"}
`

func loadCRD(t *testing.T, src string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestTreeExplainsEveryField(t *testing.T) {
	c := loadCRD(t, widgets)
	root := Tree(c.Spec.Versions[0].Schema.OpenAPIV3Schema)
	if root == nil || root.Type != "object" || root.Description != "A widget." {
		t.Fatalf("root %+v", root)
	}
	cases := []struct {
		path  string
		check func(n *Node) bool
	}{
		{"spec", func(n *Node) bool {
			return len(n.Rules) == 1 && n.Rules[0].Message == "at most 10" && n.Rules[0].Reason == "FieldValueInvalid" &&
				slices.Equal(n.Junctors, []string{"oneOf: required color | required pattern"})
		}},
		{"spec.size", func(n *Node) bool {
			return n.Required && n.Type == "integer" && n.Default == "1" &&
				slices.Equal(n.Limits, []string{"minimum 1", "exclusive maximum 10"})
		}},
		{"spec.color", func(n *Node) bool {
			return !n.Required && slices.Equal(n.Enum, []string{`"red"`, `"green"`}) && n.Pattern == "^[a-z]+$" && slices.Equal(n.Limits, []string{"maxLength 8"})
		}},
		{"spec.port", func(n *Node) bool {
			return n.Type == "int-or-string" && slices.Contains(n.Extensions, "x-kubernetes-int-or-string")
		}},
		{"spec.labels", func(n *Node) bool {
			return n.Type == "map of string" && slices.Contains(n.Extensions, "x-kubernetes-map-type: granular")
		}},
		{"spec.labels{}", func(n *Node) bool { return n.Type == "string" && n.Name == "{}" }},
		{"spec.ports", func(n *Node) bool {
			return n.Type == "array" && slices.Equal(n.Extensions, []string{"x-kubernetes-list-type: map", "x-kubernetes-list-map-keys: name"}) && slices.Equal(n.Limits, []string{"maxItems 5"})
		}},
		{"spec.ports[].name", func(n *Node) bool { return n.Required && n.Depth == 4 }},
		{"spec.tags", func(n *Node) bool {
			return n.Type == "array of string" && slices.Equal(n.Limits, []string{"uniqueItems"})
		}},
		{"spec.template", func(n *Node) bool {
			return slices.Equal(n.Extensions, []string{"x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"})
		}},
		{"spec.anything", func(n *Node) bool { return n.Type == "any" }},
		{"status", func(n *Node) bool { return n.Nullable }},
	}
	for _, tc := range cases {
		n := root.Find(tc.path)
		if n == nil {
			t.Errorf("%s: not found", tc.path)
			continue
		}
		if n.Path != tc.path || !tc.check(n) {
			t.Errorf("%s: %+v", tc.path, *n)
		}
	}
	if root.Find("spec.nope") != nil {
		t.Error("found a field that does not exist")
	}
	if got := names(root.Find("spec").Children); !slices.Equal(got, []string{"anything", "color", "labels", "pattern", "port", "ports", "size", "tags", "template"}) {
		t.Errorf("spec children %v: want sorted", got)
	}
	if root.Descendants != count(root)-1 || root.Descendants != 15 {
		t.Errorf("descendants %d, counted %d", root.Descendants, count(root)-1)
	}
}

func names(ns []*Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

func count(n *Node) int {
	c := 1
	for _, ch := range n.Children {
		c += count(ch)
	}
	return c
}

func TestVersionsAndConversion(t *testing.T) {
	c := loadCRD(t, widgets)
	vs := Versions(c)
	if len(vs) != 2 {
		t.Fatalf("%d versions", len(vs))
	}
	v1, beta := vs[0], vs[1]
	if !v1.Served || !v1.Storage || !v1.Stored || !slices.Equal(v1.Subresources, []string{"status", "scale"}) ||
		*v1.Scale != (Scale{".spec.size", ".status.size", ".status.selector"}) || len(v1.PrinterColumns) != 2 ||
		v1.PrinterColumns[1].Priority != 1 || !slices.Equal(v1.SelectableFields, []string{".spec.color"}) {
		t.Errorf("v1 %+v", v1)
	}
	if tree := Tree(c.Spec.Versions[0].Schema.OpenAPIV3Schema); !v1.Schema || v1.Fields != tree.Descendants || v1.Fields == 0 {
		t.Errorf("v1 counts %d fields (schema %v), its tree %d", v1.Fields, v1.Schema, tree.Descendants)
	}
	if beta.Served || beta.Stored || !beta.Deprecated || beta.DeprecationWarning != "example.com/v1beta1 Widget is deprecated" {
		t.Errorf("v1beta1 %+v", beta)
	}
	if conv := ConversionOf(c); conv != (Conversion{Strategy: "None"}) {
		t.Errorf("conversion %+v", conv)
	}
	c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"}, ClientConfig: &apiextensionsv1.WebhookClientConfig{
			Service: &apiextensionsv1.ServiceReference{Namespace: "widgets", Name: "convert", Path: ptr.To("/convert"), Port: ptr.To[int32](9443)}}}}
	if conv := ConversionOf(c); conv.Strategy != "Webhook" || conv.Target != "service widgets/convert:9443/convert" || conv.ReviewVersions != "v1" || conv.CABundle != "empty" {
		t.Errorf("webhook conversion %+v", conv)
	}
}

func TestLints(t *testing.T) {
	cases := []struct {
		name   string
		change func(c *apiextensionsv1.CustomResourceDefinition)
		want   []string
	}{
		{name: "clean"},
		{name: "stored version no longer served", change: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Status.StoredVersions = []string{"v1beta1", "v1"}
		}, want: []string{CodeSeveralStored, CodeStoredNotServed}},
		{name: "served deprecated version", change: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[1].Served = true
		}, want: []string{CodeDeprecated}},
		{name: "nothing served", change: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Served = false
		}, want: []string{CodeNothingServed, CodeStoredNotServed}},
		{name: "no schema", change: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[1].Schema = nil
		}, want: []string{CodeNoSchema}},
		{name: "conditions", change: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Status.Conditions = append(c.Status.Conditions,
				apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NonStructuralSchema, Status: "True", Message: "spec.x: Required value:\n type"},
				apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: "True"})
			c.Status.Conditions[1].Status = "False"
		}, want: []string{CodeNamesNotAccepted, CodeNonStructural, CodeTerminating}},
		{name: "conversion webhook without client config", change: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
		}, want: []string{CodeConversionNoHook}},
		{name: "conversion webhook over http with a bad caBundle", change: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{
					URL: ptr.To("http://convert.example.com"), CABundle: []byte("junk")}}}
		}, want: []string{admission.CodeCABundleInvalid, admission.CodeURLNotHTTPS}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := loadCRD(t, widgets)
			if tc.change != nil {
				tc.change(c)
			}
			var got []string
			for _, f := range Lint(c, now) {
				got = append(got, f.Code)
				if strings.Contains(f.Message, "\n") || f.Title == "" {
					t.Errorf("malformed finding %+v", f)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
		})
	}
}
