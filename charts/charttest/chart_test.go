package charttest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartLints runs `helm lint --strict` (warnings fail) with the chart's
// defaults and with each example values file.
func TestChartLints(t *testing.T) {
	eachHelm(t, func(t *testing.T, h helmCLI) {
		cases := append([]string{""}, exampleValues(t)...)
		for _, f := range cases {
			name := "defaults"
			args := []string{"lint", "--strict", chartDir}
			if f != "" {
				name = exampleName(f)
				args = append(args, "--values", f)
			}
			t.Run(name, func(t *testing.T) {
				out, stderr, err := h.run(t, args...)
				if err != nil {
					t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
				}
			})
		}
	})
}

// TestChartRendersEachExample renders every example values file and checks
// what each says it gives: its sign-in mode, its ledger, its Secrets mounted
// where the flags point, and the optional parts (oauth2-proxy, the approver,
// Ingress, HTTPRoute) exactly when asked for.
func TestChartRendersEachExample(t *testing.T) {
	eachHelm(t, func(t *testing.T, h helmCLI) {
		for _, f := range exampleValues(t) {
			t.Run(exampleName(f), func(t *testing.T) {
				objs := h.render(t, "clusterdesk", "clusterdesk", []string{f})
				dep := find(t, objs, "Deployment", "clusterdesk")
				c := container(t, dep, "clusterdesk")
				args := strings.Join(stringsAt(c, "args"), " ")
				vals := readValues(t, f)
				mode := vals.str("auth", "mode")
				if !strings.Contains(args, "--auth="+mode) {
					t.Errorf("args %q lack --auth=%s", args, mode)
				}
				replicas, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
				pdb := len(byKind(objs, "PodDisruptionBudget")) == 1
				if (replicas > 1) != pdb {
					t.Errorf("%d replicas, PodDisruptionBudget rendered: %v", replicas, pdb)
				}
				pvc := len(byKind(objs, "PersistentVolumeClaim")) == 1
				if ledger := vals.str("ledger", "type"); (ledger == "sqlite") != pvc || (ledger == "sqlite" && replicas != 1) {
					t.Errorf("ledger %s, %d replicas, PersistentVolumeClaim rendered: %v", ledger, replicas, pvc)
				}
				// Every file a flag names is on a mounted volume.
				mounts := map[string]bool{}
				for _, m := range mapsAt(c, "volumeMounts") {
					mounts[m["mountPath"].(string)] = true
				}
				for _, a := range stringsAt(c, "args") {
					k, v, ok := strings.Cut(a, "=")
					if !ok || !strings.HasPrefix(v, "/etc/clusterdesk/") || !(strings.HasSuffix(k, "-file") || strings.Contains(k, "tls") || strings.Contains(k, "ca") || k == "--session-keys") {
						continue
					}
					dir := v
					if k != "--session-keys" {
						dir = filepath.Dir(v)
					}
					if !mounts[dir] {
						t.Errorf("%s points at %s, which no volume mounts (mounts %v)", k, v, mounts)
					}
				}
				wants := map[string]bool{
					"ConfigMap":                 vals.boolean("auth", "proxy", "oauth2Proxy", "enabled"),
					"Ingress":                   vals.boolean("ingress", "enabled"),
					"HTTPRoute":                 vals.boolean("httpRoute", "enabled"),
					"ValidatingAdmissionPolicy": true,
					"CustomResourceDefinition":  true,
				}
				for kind, want := range wants {
					if got := len(byKind(objs, kind)) > 0; got != want {
						t.Errorf("%s rendered: %v, want %v", kind, got, want)
					}
				}
				approver := slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
					return o.GetKind() == "Deployment" && o.GetName() == "clusterdesk-approver"
				})
				if want := vals.boolean("approver", "enabled"); approver != want {
					t.Errorf("approver Deployment rendered: %v, want %v", approver, want)
				}
				if approver {
					a := container(t, find(t, objs, "Deployment", "clusterdesk-approver"), "approver")
					if !slices.Contains(stringsAt(a, "args"), "--dry-run") {
						t.Errorf("the example approver does not start in dry run: %v", stringsAt(a, "args"))
					}
				}
			})
		}
	})
}

// TestChartMonitoringOnlyWhereServed: the ServiceMonitor and PrometheusRule
// are rendered when the cluster serves monitoring.coreos.com/v1 and not
// otherwise (a cluster without the operator would refuse the kinds).
func TestChartMonitoringOnlyWhereServed(t *testing.T) {
	eachHelm(t, func(t *testing.T, h helmCLI) {
		approverOn := filepath.Join(chartDir, "examples", "approver-on.yaml")
		without := h.render(t, "clusterdesk", "clusterdesk", []string{approverOn})
		with := h.render(t, "clusterdesk", "clusterdesk", []string{approverOn}, "--api-versions", "monitoring.coreos.com/v1")
		for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
			if n := len(byKind(without, kind)); n != 0 {
				t.Errorf("without monitoring.coreos.com/v1: %d %s rendered, want none", n, kind)
			}
			if n := len(byKind(with, kind)); n != 1 {
				t.Errorf("with monitoring.coreos.com/v1: %d %s rendered, want 1", n, kind)
			}
		}
	})
}

// TestChartRefusesBadValues: wrong values fail at install (helm template runs
// the same schema and templates) with a message that names the value and why.
func TestChartRefusesBadValues(t *testing.T) {
	eachHelm(t, func(t *testing.T, h helmCLI) {
		cases := []struct {
			name string
			set  []string
			want []string // each must appear in the error
		}{
			{"replicas on sqlite", []string{"replicas=2", "sessionKeys.existingSecret=keys"},
				[]string{"replicas is 2 but ledger.type is sqlite", "one file that one process writes", "ledger.type=postgres"}},
			{"replicas without session keys", []string{"replicas=2", "ledger.type=postgres", "ledger.postgres.existingSecret=ledger"},
				[]string{"sessionKeys.existingSecret is not set", "signed out"}},
			{"unknown auth mode", []string{"auth.mode=ldap"},
				[]string{"/auth/mode", "token", "oidc", "proxy"}},
			{"oidc without its Secret", []string{"auth.mode=oidc", "auth.oidc.issuerURL=https://idp.example.com", "auth.oidc.clientID=cd"},
				[]string{"/auth/oidc", "existingSecret"}},
			{"oidc with an empty Secret name", []string{"auth.mode=oidc", "auth.oidc.issuerURL=https://idp.example.com", "auth.oidc.clientID=cd", "auth.oidc.existingSecret="},
				[]string{"/auth/oidc/existingSecret"}},
			{"proxy without its Secret", []string{"auth.mode=proxy"},
				[]string{"/auth/proxy", "existingSecret"}},
			{"an unknown ledger readers", []string{"ledger.readers=everyone"},
				[]string{"/ledger/readers", "granted", "listers"}},
			{"postgres without its Secret", []string{"ledger.type=postgres"},
				[]string{"/ledger/postgres", "existingSecret"}},
			{"audit webhook without its Secret", []string{"auditWebhook.enabled=true"},
				[]string{"/auditWebhook", "existingSecret"}},
			{"oidc issuer over http", []string{"auth.mode=oidc", "auth.oidc.issuerURL=http://idp", "auth.oidc.clientID=cd", "auth.oidc.existingSecret=s"},
				[]string{"/auth/oidc/issuerURL"}},
			{"a misspelt value", []string{"replica=2"},
				[]string{"replica"}},
			{"approver without signers", []string{"approver.enabled=true", "approver.signers=null"},
				[]string{"/approver"}},
			// An empty resourceNames grants every signer: the CSR approver's
			// groups without signers is refused, saying so.
			{"CSR approver bound without signers", []string{"roles.csrApprover.groups={oidc:oncall}"},
				[]string{"roles.csrApprover.signers is empty", "every signer"}},
			{"a role's groups as a string", []string{"roles.viewer.groups=oidc:sre"},
				[]string{"/roles/viewer/groups", "want array"}},
			{"a misspelt role", []string{"roles.viewr.groups={oidc:sre}"},
				[]string{"/roles", "viewr"}},
			{"a signer without its domain", []string{"roles.csrApprover.signers={kubelet-serving}", "roles.csrApprover.groups={g}"},
				[]string{"/roles/csrApprover/signers/0"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				args := []string{"template", "clusterdesk", chartDir}
				for _, s := range c.set {
					args = append(args, "--set", s)
				}
				out, stderr, err := h.run(t, args...)
				if err == nil {
					t.Fatalf("helm %s succeeded, want a refusal; rendered %d bytes", strings.Join(args, " "), len(out))
				}
				for _, w := range c.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("the refusal does not say %q:\n%s", w, stderr)
					}
				}
			})
		}
		// The control: the same command with good values renders.
		if _, stderr, err := h.run(t, "template", "clusterdesk", chartDir, "--set", "replicas=2", "--set", "ledger.type=postgres",
			"--set", "ledger.postgres.existingSecret=ledger", "--set", "sessionKeys.existingSecret=keys"); err != nil {
			t.Errorf("good values refused: %v\n%s", err, stderr)
		}
	})
}

// values reads a values file as a tree.
type values map[string]any

func readValues(t testing.TB, path string) values {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := values{}
	if err := yamlUnmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func (v values) at(path ...string) any {
	var cur any = map[string]any(v)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// str is a string value, or the chart's default where the file leaves it out.
func (v values) str(path ...string) string {
	if s, ok := v.at(path...).(string); ok {
		return s
	}
	switch strings.Join(path, ".") {
	case "auth.mode":
		return "token"
	case "ledger.type":
		return "sqlite"
	}
	return ""
}

func (v values) boolean(path ...string) bool {
	b, _ := v.at(path...).(bool)
	return b
}

// container returns a Deployment's container by name.
func container(t testing.TB, dep *unstructured.Unstructured, name string) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		if m := c.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("Deployment %s has no container %s", dep.GetName(), name)
	return nil
}

func stringsAt(m map[string]any, field string) []string {
	s, _, _ := unstructured.NestedStringSlice(m, field)
	return s
}

func mapsAt(m map[string]any, field string) []map[string]any {
	s, _, _ := unstructured.NestedSlice(m, field)
	var out []map[string]any
	for _, e := range s {
		out = append(out, e.(map[string]any))
	}
	return out
}
