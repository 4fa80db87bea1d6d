package admission

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// realFixtures is the shared folder of public real-world manifests, beside
// the repository.
const realFixtures = "../../../shared/fixtures/real"

// documents reads every manifest under dir, split into YAML documents.
func documents(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(realFixtures, dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s (is ../shared beside the repository?): %v", filepath.Join(realFixtures, dir), err)
	}
	out := map[string][]byte{}
	sep := regexp.MustCompile(`(?m)^---\s*$`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range sep.Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			out[filepath.Base(f)+"#"+strconv.Itoa(i)] = []byte(doc)
		}
	}
	return out
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

var knownCodes = []string{
	CodeFailKubeSystem, CodeFailOwnNamespace, CodeWildcardResources, CodeSensitiveResources, CodeExemptResources,
	CodeTimeout, CodeSideEffects, CodeCABundleEmpty, CodeCABundleInvalid, CodeCAExpired, CodeCAExpiring,
	CodeCANotYetValid, CodeURLNotHTTPS, CodeNoTarget, CodeServiceMissing, CodeNoReadyEndpoints, CodeBackendUnknown,
}

func realConfigs(t *testing.T) map[string]Config {
	out := map[string]Config{}
	for name, doc := range documents(t, "validatingwebhookconfigurations") {
		var c admissionregistrationv1.ValidatingWebhookConfiguration
		if err := yaml.UnmarshalStrict(doc, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out["validating/"+name] = FromValidating(&c)
	}
	for name, doc := range documents(t, "mutatingwebhookconfigurations") {
		var c admissionregistrationv1.MutatingWebhookConfiguration
		if err := yaml.UnmarshalStrict(doc, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out["mutating/"+name] = FromMutating(&c)
	}
	return out
}

// TestRealWorldConfigurations explains every real-world webhook and checks
// the lints against what each manifest says, computed from its own fields.
func TestRealWorldConfigurations(t *testing.T) {
	configs := realConfigs(t)
	if len(configs) < 12 {
		t.Fatalf("only %d webhook configurations found", len(configs))
	}
	hooks := 0
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			if len(cfg.Hooks) == 0 {
				t.Fatal("no webhooks decoded")
			}
			for _, h := range cfg.Hooks {
				hooks++
				s := Summarize(h)
				if s.Target == "—" || s.Name == "" || len(s.Rules) != len(h.Rules) {
					t.Errorf("%s: summary %+v", h.Name, s)
				}
				fs := append(Lint(cfg, h, now), LintBackend(h, Backend{Checked: true})...)
				got := map[string]bool{}
				for _, f := range fs {
					got[f.Code] = true
					if !slices.Contains(knownCodes, f.Code) || f.Title == "" || f.Message == "" || strings.Contains(f.Message, "\n") {
						t.Errorf("%s: malformed finding %+v", h.Name, f)
					}
				}
				if want := h.TimeoutSeconds > 10; got[CodeTimeout] != want {
					t.Errorf("%s: timeout %d, lint %v", h.Name, h.TimeoutSeconds, got[CodeTimeout])
				}
				if h.FailurePolicy == admissionregistrationv1.Ignore && (got[CodeFailKubeSystem] || got[CodeFailOwnNamespace]) {
					t.Errorf("%s: fail lints on an Ignore webhook", h.Name)
				}
				if want := h.NamespaceSelector == nil && h.ObjectSelector == nil && h.FailurePolicy == admissionregistrationv1.Fail && h.mayMatchNamespaced(); want && !got[CodeFailKubeSystem] {
					t.Errorf("%s: Fail without selectors but no kube-system lint", h.Name)
				}
				wildcard := false
				for _, r := range h.Rules {
					for _, res := range r.Resources {
						wildcard = wildcard || res == "*" || strings.HasPrefix(res, "*/")
					}
				}
				if got[CodeWildcardResources] != wildcard {
					t.Errorf("%s: wildcard rules %v, lint %v", h.Name, wildcard, got[CodeWildcardResources])
				}
				if want := len(bytes.TrimSpace(h.ClientConfig.CABundle)) == 0 && h.ServiceRef() != nil; got[CodeCABundleEmpty] != want {
					t.Errorf("%s: empty caBundle %v, lint %v", h.Name, want, got[CodeCABundleEmpty])
				}
				if want := h.ServiceRef() != nil; got[CodeServiceMissing] != want {
					t.Errorf("%s: service target %v, service-missing lint %v", h.Name, want, got[CodeServiceMissing])
				}
			}
		})
	}
	t.Logf("%d configurations, %d webhooks", len(configs), hooks)
}
