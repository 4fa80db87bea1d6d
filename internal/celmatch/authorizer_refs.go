package celmatch

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/parser"
)

// asksAuthorizer reports whether expr's result may stand on an `authorizer`
// check: it names the authorizer variable, or a policy variable
// (`variables.<name>`, whose expressions are vars) that does, at any depth.
// It reads the parsed expression, so a comment, a string or a field that
// merely contains the word does not count. An expression that does not parse
// asks if it contains the word (it fails to compile anyway, and says so).
func asksAuthorizer(expr string, vars map[string]string) bool {
	return asks(expr, vars, map[string]bool{})
}

func asks(expr string, vars map[string]string, seen map[string]bool) bool {
	parsed, errs := parser.Parse(common.NewTextSource(expr))
	if errs != nil && len(errs.GetErrors()) > 0 {
		return strings.Contains(expr, "authorizer")
	}
	found := false
	ast.MatchDescendants(ast.NavigateAST(parsed), func(e ast.NavigableExpr) bool {
		switch e.Kind() {
		case ast.IdentKind:
			found = found || e.AsIdent() == "authorizer"
		case ast.SelectKind:
			s := e.AsSelect()
			if op := s.Operand(); op.Kind() == ast.IdentKind && op.AsIdent() == "variables" {
				name := s.FieldName()
				if v, ok := vars[name]; ok && !seen[name] {
					seen[name] = true
					found = found || asks(v, vars, seen)
				}
			}
		}
		return false
	})
	return found
}

// policyVariables are a policy's variables by name, for asksAuthorizer.
func policyVariables(spec admissionregistrationv1.ValidatingAdmissionPolicySpec) map[string]string {
	vars := make(map[string]string, len(spec.Variables))
	for _, v := range spec.Variables {
		vars[v.Name] = v.Expression
	}
	return vars
}
