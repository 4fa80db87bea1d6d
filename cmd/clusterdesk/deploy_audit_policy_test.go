package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDeployAuditPolicyIsTheDevclusters keeps the audit policy the README
// tells cluster admins to run (deploy/audit-webhook/policy.yaml) the same as
// the one the devcluster's API server runs (devcluster/internal/plane's
// auditPolicy), which every ledger test is proved against: a rule changed in
// one only would ship a policy nothing tested. The devcluster is a module of
// its own and cannot embed a file outside it, so the test reads its source.
func TestDeployAuditPolicyIsTheDevclusters(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(deployDir, "audit-webhook", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The file's leading comment is for the admin; the policy is the rest.
	lines := strings.SplitAfter(string(raw), "\n")
	for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
		lines = lines[1:]
	}
	shipped := strings.Join(lines, "")

	devcluster := devclusterAuditPolicy(t)
	if shipped != devcluster {
		t.Errorf("deploy/audit-webhook/policy.yaml differs from the devcluster's auditPolicy (devcluster/internal/plane/plane.go): change both\n--- deploy\n%s\n--- devcluster\n%s", shipped, devcluster)
	}
}

// devclusterAuditPolicy returns the value of the auditPolicy constant in
// devcluster/internal/plane/plane.go.
func devclusterAuditPolicy(t *testing.T) string {
	t.Helper()
	path := filepath.Join("..", "..", "devcluster", "internal", "plane", "plane.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if n.Name != "auditPolicy" || i >= len(v.Values) {
					continue
				}
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s: auditPolicy is not a string literal", path)
				}
				policy, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				return policy
			}
		}
	}
	t.Fatalf("%s has no auditPolicy constant", path)
	return ""
}
