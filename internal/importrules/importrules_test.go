package importrules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/clusterdesk/clusterdesk"

// allowed lists the violations that are known, being removed on another
// branch, and tolerated until that branch is merged. An entry is
// "rule: from -> to" as the test prints it (module prefix dropped). An entry
// that no longer occurs fails the test too, so that it is deleted when the
// fix lands and cannot hide a later regression.
var allowed = map[string]string{}

// pkg is the part of `go list -json` the rules read.
type pkg struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// graph is the module's packages by import path, and every package (standard
// library and dependencies too) reached from them, for the import chains.
type graph struct {
	ours map[string]*pkg
	all  map[string]*pkg
}

func goList(t *testing.T, args ...string) map[string]*pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-e", "-json"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs
}

// load lists the module's packages. Test files are read with the
// integration build tag too, so integration tests' imports are checked.
func load(t *testing.T) graph {
	t.Helper()
	all := goList(t, "-tags", "integration", "-deps", module+"/...")
	ours := map[string]*pkg{}
	for path, p := range all {
		if path == module || strings.HasPrefix(path, module+"/") {
			ours[path] = p
		}
	}
	if len(ours) < 10 {
		t.Fatalf("go list found %d packages of %s: not run inside the module?", len(ours), module)
	}
	return graph{ours: ours, all: all}
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func under(path string, dirs ...string) bool {
	r := rel(path)
	for _, d := range dirs {
		if r == d || strings.HasPrefix(r, d+"/") {
			return true
		}
	}
	return false
}

func hasPrefix(path string, prefixes ...string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// chain is the shortest import path from → to over non-test imports, printed
// so a transitive violation says which import to cut.
func (g graph) chain(from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for p := to; p != ""; p = prev[p] {
				path = append(path, rel(p))
			}
			slices.Reverse(path)
			return strings.Join(path, " -> ")
		}
		if p := g.all[cur]; p != nil {
			for _, imp := range p.Imports {
				if _, seen := prev[imp]; !seen {
					prev[imp] = cur
					queue = append(queue, imp)
				}
			}
		}
	}
	return rel(from) + " -> … -> " + rel(to)
}

// reportedBelow reports whether p reaches to only through a package of the
// module that the same rule reports, so one bad import is printed once, at
// the package that makes it, not again at everything above it.
func (g graph) reportedBelow(r rule, p *pkg, to string) bool {
	if slices.Contains(p.Imports, to) {
		return false
	}
	for _, imp := range p.Imports {
		if q := g.ours[imp]; q != nil && r.applies(imp) && slices.Contains(q.Deps, to) {
			return true
		}
	}
	return false
}

// rule is one layering rule: the packages it applies to, which of their
// imports it reads, and what they must not reach.
type rule struct {
	name string
	// applies selects the importing packages (module packages only).
	applies func(path string) bool
	// transitive reads Deps (everything linked) instead of direct Imports.
	transitive bool
	// tests reads the test files' imports too.
	tests bool
	// forbidden reports whether from may not import to.
	forbidden func(from, to string) bool
}

var webLayer = []string{module + "/handlers", module + "/views", "github.com/labstack/echo", "github.com/a-h/templ"}

var rules = []rule{
	{
		// ARCHITECTURE.md: views take view models; they import no k8s.io/*, no echo.
		name:       "views import no k8s.io and no echo",
		applies:    func(p string) bool { return under(p, "views") },
		transitive: true,
		forbidden: func(_, to string) bool {
			return hasPrefix(to, "github.com/labstack/echo") || strings.HasPrefix(to, "k8s.io/") || strings.HasPrefix(to, "sigs.k8s.io/")
		},
	},
	{
		// Domain logic (csr, apf, admission, crd, docs, audit, managedfields, auth)
		// and use cases under internal/ know nothing of HTTP routing or
		// templates. Only present builds view models, and live may render
		// fragments (ARCHITECTURE.md: internal/live -> views).
		name:       "internal packages import no web layer (handlers, echo, templ)",
		applies:    func(p string) bool { return under(p, "internal") && !under(p, "internal/live") },
		transitive: true,
		forbidden: func(_, to string) bool {
			return hasPrefix(to, module+"/handlers", "github.com/labstack/echo", "github.com/a-h/templ")
		},
	},
	{
		name:       "internal packages import no views (present builds view models)",
		applies:    func(p string) bool { return under(p, "internal") && !under(p, "internal/present", "internal/live") },
		transitive: true,
		forbidden:  func(_, to string) bool { return hasPrefix(to, module+"/views") },
	},
	{
		// Presenters are the top of internal/: they turn what the engines
		// (csrqueue: the CSR queue's filters, order, storms) and use cases
		// (flowschemaform, decide…) compute into view models, never the
		// reverse, so those stay usable and testable without a view model.
		name:       "only handlers and cmd import present (engines and use cases sit below it)",
		applies:    func(p string) bool { return under(p, "internal") && !under(p, "internal/present") },
		transitive: true,
		forbidden:  func(_, to string) bool { return to == module+"/internal/present" },
	},
	{
		name:      "present imports views/model only",
		applies:   func(p string) bool { return under(p, "internal/present") },
		forbidden: func(_, to string) bool { return hasPrefix(to, webLayer...) && to != module+"/views/model" },
	},
	{
		// Presenters map objects to view models and keep nothing between
		// calls: a memo or cache belongs to the package that owns its data
		// (csrpolicy's compilations, admission's lint tallies, csrqueue's
		// index), where its bound and its invalidation are that data's. The
		// imports catch a lock or an LRU; a bare package-level map would
		// pass, and review must catch that.
		name:    "present keeps no process-wide state (no sync, no LRU)",
		applies: func(p string) bool { return under(p, "internal/present") },
		forbidden: func(_, to string) bool {
			return hasPrefix(to, "sync", "github.com/hashicorp/golang-lru")
		},
	},
	{
		name:    "live imports no handlers and no echo",
		applies: func(p string) bool { return under(p, "internal/live") },
		forbidden: func(_, to string) bool {
			return hasPrefix(to, module+"/handlers", "github.com/labstack/echo")
		},
		transitive: true,
	},
	{
		// kube is the bottom of the graph: cmd -> handlers -> internal/* -> internal/kube.
		name:      "internal/kube imports no other package of the module",
		applies:   func(p string) bool { return under(p, "internal/kube") },
		forbidden: func(_, to string) bool { return hasPrefix(to, module) },
	},
	{
		// Handlers call kube and use cases; client-go stays in internal/kube.
		name:      "handlers import no client-go",
		applies:   func(p string) bool { return under(p, "handlers") },
		forbidden: func(_, to string) bool { return hasPrefix(to, "k8s.io/client-go") },
	},
	{
		// handlers imports its feature packages (handlers/<feature>) and their
		// shared base; no other package imports any of them.
		name:    "nothing but cmd imports handlers or cmd",
		applies: func(p string) bool { return !under(p, "cmd") },
		forbidden: func(from, to string) bool {
			if !hasPrefix(to, module+"/handlers", module+"/cmd") || to == from {
				return false
			}
			return !under(from, "handlers") || hasPrefix(to, module+"/cmd") || to == module+"/handlers"
		},
	},
	{
		// A feature package under handlers/ takes the shared base (page
		// helpers, ports) and nothing of handlers or of another feature:
		// handlers wires them together (routes.go), so features stay apart.
		name:      "handlers' feature packages import only the base of handlers",
		applies:   handlersSubpackage,
		forbidden: featureImportForbidden,
	},
	{
		// The same for their tests, which may also use the test support
		// under handlers/internal.
		name:    "tests of handlers' feature packages import only the base of handlers and its test support",
		applies: handlersSubpackage,
		tests:   true,
		forbidden: func(from, to string) bool {
			return featureImportForbidden(from, to) && !hasPrefix(to, module+"/handlers/internal")
		},
	},
	{
		// The handlers root keeps the route table, the wiring and the
		// middleware: the features run the use cases and word their results
		// (handlers/<feature>), internal/writeaudit builds the audit record
		// of their writes; the root hands them the services it builds.
		name:      "the handlers root runs no use case and builds no audit record",
		applies:   func(p string) bool { return p == module+"/handlers" },
		forbidden: func(_, to string) bool { return hasPrefix(to, rootForbidden...) },
	},
	{
		// Tests may wire the whole console as main does only in handlers' own
		// tests and in internal/faults (tests that break the cluster on purpose).
		name:      "tests of other packages import no handlers or cmd",
		applies:   func(p string) bool { return !under(p, "cmd", "handlers", "internal/faults") },
		tests:     true,
		forbidden: func(_, to string) bool { return hasPrefix(to, module+"/handlers", module+"/cmd") },
	},
}

// rootForbidden are the use cases, engines and domain packages the handlers
// root may not import: what a request does belongs to a feature package
// (or, for a write's audit record, internal/writeaudit), which the root
// only builds.
var rootForbidden = func() []string {
	var out []string
	for _, p := range []string{
		"editing", "decide", "issue", "cleanup", "flowschemaform", "intercept", // use cases
		"attention", "apfload", "admission", "approvers", "celmatch", "apf", "csr", "csrwhy", "edit", // engines and domains
	} {
		out = append(out, module+"/internal/"+p)
	}
	return out
}()

// handlersBase are the packages under handlers/ that every feature package
// may import: the shared page helpers, the ports (interfaces) main builds and
// the kind registry (one declaration per kind, read by the root and the
// features alike).
var handlersBase = []string{module + "/handlers/page", module + "/handlers/ports", module + "/handlers/kinds"}

// handlersSubpackage selects every package under handlers/ but handlers itself.
func handlersSubpackage(p string) bool { return under(p, "handlers") && p != module+"/handlers" }

// featureImportForbidden reports whether a package under handlers/ imports a
// package of handlers that is neither itself nor the base.
func featureImportForbidden(from, to string) bool {
	return hasPrefix(to, module+"/handlers") && to != from && !slices.Contains(handlersBase, to)
}

// testOnly are packages a shipped binary must not link: the standard
// library's test support, test libraries, and the module's test helpers.
var testOnly = []string{
	"testing", "net/http/httptest", "github.com/PuerkitoBio/goquery", "github.com/stretchr/testify",
	// Not k8s.io/client-go/testing: client-go's own gentype links it in every client.
	"k8s.io/client-go/kubernetes/fake", "k8s.io/client-go/dynamic/fake",
	module + "/internal/testcluster", module + "/internal/testfixtures", module + "/internal/testpg", module + "/views/internal/viewtest",
	module + "/internal/ingest/ingesttest",
}

// binaries are the programs an admin runs; the bench programs are tools
// of the repository and may use test helpers.
var binaries = []string{module + "/cmd/clusterdesk"}

func violations(g graph) []string {
	var found []string
	paths := make([]string, 0, len(g.ours))
	for p := range g.ours {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, r := range rules {
		for _, from := range paths {
			if !r.applies(from) {
				continue
			}
			p := g.ours[from]
			imports := p.Imports
			if r.transitive {
				imports = p.Deps
			}
			if r.tests {
				imports = append(slices.Clone(p.TestImports), p.XTestImports...)
			}
			for _, to := range imports {
				if !r.forbidden(from, to) || (r.transitive && g.reportedBelow(r, p, to)) {
					continue
				}
				v := fmt.Sprintf("%s: %s -> %s", r.name, rel(from), rel(to))
				if r.transitive && !slices.Contains(p.Imports, to) {
					v += "   (via " + g.chain(from, to) + ")"
				}
				found = append(found, v)
			}
		}
	}
	for _, bin := range binaries {
		p := g.ours[bin]
		if p == nil {
			found = append(found, "binary not found: "+bin)
			continue
		}
		for _, to := range p.Deps {
			if hasPrefix(to, testOnly...) {
				found = append(found, fmt.Sprintf("the console binary links no test packages: %s -> %s   (via %s)", rel(bin), rel(to), g.chain(bin, to)))
			}
		}
	}
	return found
}

// key is the allowlist form of a violation: without the "(via …)" chain.
func key(v string) string {
	k, _, _ := strings.Cut(v, "   (via ")
	return k
}

func TestImportRules(t *testing.T) {
	g := load(t)
	seen := map[string]bool{}
	for _, v := range violations(g) {
		if why, ok := allowed[key(v)]; ok {
			seen[key(v)] = true
			t.Logf("known, allowed (%s): %s", why, v)
			continue
		}
		t.Errorf("import rule broken: %s", v)
	}
	for k, why := range allowed {
		if !seen[k] {
			t.Errorf("allowlist entry no longer needed (%s): delete %q from allowed", why, k)
		}
	}
}

// TestRulesCatchForbiddenImports shows each rule fails on the import it is
// about, on a made-up graph, so a rule that can never fire is noticed.
func TestRulesCatchForbiddenImports(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	g := graph{ours: map[string]*pkg{}, all: map[string]*pkg{}}
	add := func(path string, imports ...string) {
		p := &pkg{ImportPath: path, Imports: imports, Deps: imports}
		g.all[path] = p
		if strings.HasPrefix(path, module) {
			g.ours[path] = p
		}
	}
	add(m("views/pages"), "k8s.io/api/core/v1", "github.com/labstack/echo/v4")
	add(m("internal/csr"), "github.com/a-h/templ", m("handlers"))
	add(m("internal/apf"), m("views/model"))
	add(m("internal/csrqueue"), m("internal/present"))
	add(m("internal/present"), m("views/components"), "sync", "github.com/hashicorp/golang-lru/v2")
	add(m("internal/live"), "github.com/labstack/echo/v4")
	add(m("internal/kube"), m("internal/audit"))
	add(m("handlers"), "k8s.io/client-go/kubernetes", m("internal/decide"), m("internal/writeaudit"))
	add(m("cmd/clusterdesk"), "testing", m("handlers"))
	add(m("handlers/cleanup"), m("handlers/page"), m("handlers/signin"))
	add(m("handlers/signin"), m("handlers"))
	g.ours[m("handlers/signin")].TestImports = []string{m("handlers/cleanup"), m("handlers/internal/handlertest")}
	g.ours[m("internal/csr")].XTestImports = []string{m("cmd/clusterdesk")}
	got := strings.Join(violations(g), "\n")
	for _, want := range []string{
		"views import no k8s.io and no echo: views/pages -> k8s.io/api/core/v1",
		"views import no k8s.io and no echo: views/pages -> github.com/labstack/echo/v4",
		"internal packages import no web layer (handlers, echo, templ): internal/csr -> github.com/a-h/templ",
		"internal packages import no web layer (handlers, echo, templ): internal/csr -> handlers",
		"internal packages import no views (present builds view models): internal/apf -> views/model",
		"only handlers and cmd import present (engines and use cases sit below it): internal/csrqueue -> internal/present",
		"present imports views/model only: internal/present -> views/components",
		"present keeps no process-wide state (no sync, no LRU): internal/present -> sync",
		"present keeps no process-wide state (no sync, no LRU): internal/present -> github.com/hashicorp/golang-lru/v2",
		"live imports no handlers and no echo: internal/live -> github.com/labstack/echo/v4",
		"internal/kube imports no other package of the module: internal/kube -> internal/audit",
		"handlers import no client-go: handlers -> k8s.io/client-go/kubernetes",
		"the handlers root runs no use case and builds no audit record: handlers -> internal/decide",
		"nothing but cmd imports handlers or cmd: internal/csr -> handlers",
		"tests of other packages import no handlers or cmd: internal/csr -> cmd/clusterdesk",
		"the console binary links no test packages: cmd/clusterdesk -> testing",
		"nothing but cmd imports handlers or cmd: handlers/signin -> handlers",
		"handlers' feature packages import only the base of handlers: handlers/cleanup -> handlers/signin",
		"tests of handlers' feature packages import only the base of handlers and its test support: handlers/signin -> handlers/cleanup",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missed %q in:\n%s", want, got)
		}
	}
	for _, allowed := range []string{"cmd/clusterdesk -> handlers", "handlers/cleanup -> handlers/page", "handlers/signin -> handlers/internal/handlertest", "handlers -> internal/writeaudit"} {
		if strings.Contains(got, allowed) {
			t.Errorf("%s was flagged:\n%s", allowed, got)
		}
	}
}
