package csrpolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/parser"
)

// A policy that does not decide a request says why with its first false
// clause (issue 47: "which policy's which clause is false, with the values it
// saw"): the expression is split at its top-level && or || with cel-go's
// parsed AST, each part compiled once per Program (lazily: only a request
// some policy leaves undecided asks), and the parts evaluated in order on
// the request. A part names the variables it reads (request.username,
// node.addresses...), whose values the explanation shows, bounded.

// clauseSplit is a Program's expression split at its top level.
type clauseSplit struct {
	op      string // "&&", "||", or "" when the expression is one clause
	clauses []clause
}

type clause struct {
	text  string
	prg   cel.Program // nil when the part does not compile alone (never seen; the whole is shown)
	reads [][]string  // request/node paths it reads, the longest of each chain
}

// lazyClauses is the split, made at the first explanation.
type lazyClauses struct {
	once  sync.Once
	split *clauseSplit
}

// FalseClause is why a policy's expression is false on a request.
type FalseClause struct {
	// Text is the clause as CEL spells it (unparsed from the AST: spacing and
	// parentheses are CEL's, not the author's).
	Text string
	// Index (1-based) of Of parts; Op is the top-level operator the
	// expression was split at ("&&", "||"), "" when it is one clause.
	Index, Of int
	Op        string
	// Values are the variables the clause reads, as the request gave them.
	Values []Value
	// Err is set when the clause did not evaluate (it is no more false
	// than true; a policy erring as a whole is a Verdict's Err, not this).
	Err error
}

// Value is one variable path a clause reads and its value, worded briefly.
type Value struct{ Path, Text string }

// The bounds of an explanation's values: a request with 200 SANs shows a few.
const (
	maxValues      = 4
	maxListShown   = 4
	maxValueLength = 80
)

// Explain names the first false clause of the policy's expression on the
// request; ok is false when the expression is not false (it matches, the
// request does not decode, or no clause could be told false).
func (pr *Program) Explain(ctx context.Context, in Input) (FalseClause, bool) {
	if in.Request == nil {
		return FalseClause{}, false
	}
	split := pr.split()
	if split == nil || len(split.clauses) == 0 {
		return FalseClause{}, false
	}
	vars := in.vars()
	var firstErr *FalseClause
	for i, c := range split.clauses {
		fc := FalseClause{Text: c.text, Index: i + 1, Of: len(split.clauses), Op: split.op, Values: values(vars, c.reads)}
		if c.prg == nil {
			continue
		}
		out, _, err := c.prg.ContextEval(ctx, vars)
		if err != nil {
			if firstErr == nil {
				fc.Err = err
				firstErr = &fc
			}
			continue
		}
		if b, ok := out.Value().(bool); ok && !b {
			return fc, true
		}
		if split.op == "||" {
			return FalseClause{}, false // a true alternative: the whole is true
		}
	}
	if firstErr != nil {
		return *firstErr, true
	}
	return FalseClause{}, false
}

// split is the Program's clauses, split and compiled once.
func (pr *Program) split() *clauseSplit {
	if pr.clauses == nil { // a Program not made by Compile
		return splitExpression(pr.Expression)
	}
	pr.clauses.once.Do(func() { pr.clauses.split = splitExpression(pr.Expression) })
	return pr.clauses.split
}

// clauseEnv is the policies' environment keeping the macros' calls in the
// parsed AST: without them a comprehension (request.dnsNames.all(...)) cannot
// be unparsed back to its text.
var clauseEnv = sync.OnceValues(func() (*cel.Env, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	return e.Extend(cel.EnableMacroCallTracking())
})

// splitExpression parses expr and compiles each of its top-level parts.
func splitExpression(expr string) *clauseSplit {
	e, err := clauseEnv()
	if err != nil {
		return nil
	}
	parsed, iss := e.Parse(expr)
	if iss != nil && iss.Err() != nil {
		return nil
	}
	native := parsed.NativeRep()
	root := native.Expr()
	s := &clauseSplit{}
	var parts []celast.Expr
	switch fn := callName(root); fn {
	case operators.LogicalAnd, operators.LogicalOr:
		s.op = map[string]string{operators.LogicalAnd: "&&", operators.LogicalOr: "||"}[fn]
		parts = flatten(root, fn, nil)
	default:
		parts = []celast.Expr{root}
	}
	for _, p := range parts {
		text, err := parser.Unparse(p, native.SourceInfo())
		if err != nil {
			return nil
		}
		c := clause{text: text, reads: reads(p)}
		if checked, iss := e.Compile(text); iss == nil || iss.Err() == nil {
			c.prg, _ = e.Program(checked)
		}
		s.clauses = append(s.clauses, c)
	}
	return s
}

func callName(e celast.Expr) string {
	if e.Kind() != celast.CallKind {
		return ""
	}
	return e.AsCall().FunctionName()
}

// flatten lists the operands of a chain of one operator, left to right (the
// parser balances `a && b && c` into a tree).
func flatten(e celast.Expr, fn string, out []celast.Expr) []celast.Expr {
	if callName(e) != fn {
		return append(out, e)
	}
	for _, a := range e.AsCall().Args() {
		out = flatten(a, fn, out)
	}
	return out
}

// reads are the request and node paths an expression reads, the longest of
// each select chain (request.subject.commonName, not request.subject too).
func reads(e celast.Expr) [][]string {
	var all [][]string
	celast.PostOrderVisit(e, celast.NewExprVisitor(func(x celast.Expr) {
		if p := path(x); len(p) > 0 && (p[0] == "request" || p[0] == "node") {
			all = append(all, p)
		}
	}))
	var out [][]string
	for _, p := range all {
		covered := slices.ContainsFunc(all, func(q []string) bool { return len(q) > len(p) && slices.Equal(q[:len(p)], p) })
		if !covered && !slices.ContainsFunc(out, func(q []string) bool { return slices.Equal(q, p) }) {
			out = append(out, p)
		}
	}
	return out
}

// path is the identifiers of a select chain (request.subject.commonName),
// nil for any other expression.
func path(e celast.Expr) []string {
	switch e.Kind() {
	case celast.IdentKind:
		return []string{e.AsIdent()}
	case celast.SelectKind:
		s := e.AsSelect()
		p := path(s.Operand())
		if p == nil {
			return nil
		}
		return append(p, s.FieldName())
	}
	return nil
}

// values words the variables read, at most maxValues of them.
func values(vars map[string]any, paths [][]string) []Value {
	out := make([]Value, 0, min(len(paths), maxValues))
	for _, p := range paths {
		if len(out) == maxValues {
			break
		}
		out = append(out, Value{Path: strings.Join(p, "."), Text: word(lookup(vars, p))})
	}
	return out
}

// absent marks a path the request does not have (an unset
// expirationSeconds).
type absent struct{}

func lookup(vars map[string]any, p []string) any {
	var cur any = vars
	for _, k := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return absent{}
		}
		if cur, ok = m[k]; !ok {
			return absent{}
		}
	}
	return cur
}

// word is a value as CEL would spell it, bounded.
func word(v any) string {
	var s string
	switch v := v.(type) {
	case absent:
		return "(absent)"
	case nil:
		return "null"
	case string:
		s = fmt.Sprintf("%q", v)
	case ref.Val:
		if l, ok := v.(interface {
			Size() ref.Val
			Get(ref.Val) ref.Val
		}); ok && v.Type() == types.ListType {
			n := int(l.Size().(types.Int))
			parts := make([]string, 0, min(n, maxListShown)+1)
			for i := 0; i < n && i < maxListShown; i++ {
				parts = append(parts, word(l.Get(types.Int(i)).Value()))
			}
			if n > maxListShown {
				parts = append(parts, fmt.Sprintf("…%d more", n-maxListShown))
			}
			s = "[" + strings.Join(parts, ", ") + "]"
		} else {
			s = fmt.Sprint(v.Value())
		}
	case []string:
		return word(strs(v))
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		s = "{" + strings.Join(keys, ", ") + "}"
	default:
		s = fmt.Sprint(v)
	}
	if r := []rune(s); len(r) > maxValueLength {
		s = string(r[:maxValueLength-1]) + "…"
	}
	return s
}
