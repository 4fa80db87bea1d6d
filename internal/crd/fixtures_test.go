package crd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// realCRDs decodes every CRD among the shared real-world fixtures.
func realCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob("../../../shared/fixtures/real/customresourcedefinitions/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRD fixtures in ../shared (is it beside the repository?): %v", err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range splitDocuments(string(data)) {
			var c apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if c.Name != "" {
				out[filepath.Base(f)+"/"+c.Name] = &c
			}
		}
	}
	return out
}

// TestRealWorldCRDs builds every version's tree and lints of every real CRD
// and checks the tree, and Versions' count of fields, against the schema it
// came from.
func TestRealWorldCRDs(t *testing.T) {
	crds := realCRDs(t)
	if len(crds) < 140 {
		t.Fatalf("only %d CRDs decoded", len(crds))
	}
	largest, largestName := 0, ""
	for name, c := range crds {
		for _, v := range Versions(c) {
			schema, _ := FindVersion(c, v.Name)
			if schema.Schema == nil || schema.Schema.OpenAPIV3Schema == nil {
				if v.Schema || v.Fields != 0 {
					t.Errorf("%s %s: fields counted without a schema", name, v.Name)
				}
				continue
			}
			want := countSchema(schema.Schema.OpenAPIV3Schema)
			tree := Tree(schema.Schema.OpenAPIV3Schema)
			if tree.Descendants+1 != want {
				t.Errorf("%s %s: tree has %d nodes, schema %d", name, v.Name, tree.Descendants+1, want)
			}
			if !v.Schema || v.Fields != tree.Descendants {
				t.Errorf("%s %s: Versions counts %d fields (schema %v), the tree %d", name, v.Name, v.Fields, v.Schema, tree.Descendants)
			}
			if want > largest {
				largest, largestName = want, name+" "+v.Name
			}
			walk(tree, func(n *Node) {
				if f := tree.Find(n.Path); f != n {
					t.Errorf("%s %s: Find(%q) did not return the node", name, v.Name, n.Path)
				}
			})
		}
		for _, f := range Lint(c, now) {
			if f.Title == "" || strings.Contains(f.Message, "\n") {
				t.Errorf("%s: malformed finding %+v", name, f)
			}
		}
	}
	t.Logf("%d CRDs; largest schema: %s with %d fields", len(crds), largestName, largest)
}

func walk(n *Node, fn func(*Node)) {
	fn(n)
	for _, c := range n.Children {
		walk(c, fn)
	}
}

func countSchema(s *apiextensionsv1.JSONSchemaProps) int {
	if s == nil {
		return 0
	}
	n := 1
	for _, p := range s.Properties {
		n += countSchema(&p)
	}
	if s.Items != nil {
		n += countSchema(s.Items.Schema)
	}
	if s.AdditionalProperties != nil {
		n += countSchema(s.AdditionalProperties.Schema)
	}
	return n
}

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(s string) []string {
	var docs []string
	var cur strings.Builder
	for line := range strings.Lines(s) {
		if strings.TrimRight(line, " \t\r\n") == "---" {
			docs = append(docs, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(docs, cur.String())
}
