package whatif

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/whatif"
)

const apiVersion = "flowcontrol.apiserver.k8s.io/v1"

// draftObject is one document of the draft, with where it was.
type draftObject struct {
	n    int // the document's number, from 1
	kind kube.KindID
	name string
	obj  runtime.Object
}

// parseDraft reads the form's text: FlowSchemas and
// PriorityLevelConfigurations of flowcontrol v1, as YAML documents in any
// order. Unknown fields are errors, as the API server's strict field
// validation makes them (a misspelt field would otherwise simulate as
// absent); another kind, or the same object twice, too. Empty text is no
// draft: the backtest.
func parseDraft(text string) (whatif.Config, []draftObject, error) {
	var cfg whatif.Config
	var objs []draftObject
	seen := map[string]int{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return cfg, nil, fmt.Errorf("the draft is not YAML: %v", err)
		}
		if strings.TrimSpace(string(doc)) == "" || isComments(doc) {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return cfg, nil, fmt.Errorf("document %d is not YAML: %v", n, err)
		}
		if tm.Kind != "FlowSchema" && tm.Kind != "PriorityLevelConfiguration" {
			return cfg, nil, fmt.Errorf("document %d is a %q; the draft is FlowSchemas and PriorityLevelConfigurations", n, tm.Kind)
		}
		if tm.APIVersion != apiVersion {
			return cfg, nil, fmt.Errorf("document %d (%s): apiVersion %q, want %s", n, tm.Kind, tm.APIVersion, apiVersion)
		}
		var o draftObject
		switch tm.Kind {
		case "FlowSchema":
			fs := &flowcontrolv1.FlowSchema{}
			err = yaml.UnmarshalStrict(doc, fs)
			o = draftObject{n: n, kind: kube.FlowSchemas, name: fs.Name, obj: fs}
			cfg.FlowSchemas = append(cfg.FlowSchemas, fs)
		case "PriorityLevelConfiguration":
			pl := &flowcontrolv1.PriorityLevelConfiguration{}
			err = yaml.UnmarshalStrict(doc, pl)
			o = draftObject{n: n, kind: kube.PriorityLevels, name: pl.Name, obj: pl}
			cfg.Levels = append(cfg.Levels, pl)
		}
		if err != nil {
			return cfg, nil, fmt.Errorf("document %d (%s): %v", n, tm.Kind, err)
		}
		if o.name == "" {
			return cfg, nil, fmt.Errorf("document %d (%s) has no metadata.name", n, tm.Kind)
		}
		key := string(o.kind) + "/" + o.name
		if first, dup := seen[key]; dup {
			return cfg, nil, fmt.Errorf("documents %d and %d are both the %s %q", first, n, tm.Kind, o.name)
		}
		seen[key] = n
		objs = append(objs, o)
	}
	return cfg, objs, nil
}

// isComments tells a document of comments only (what a YAML editor leaves
// between ---).
func isComments(doc []byte) bool {
	for _, l := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

// dryRun asks the API server, as the user, to validate each object as the
// write it would be: an update when the object exists (its current
// resourceVersion, so the update is not refused as a conflict), else a
// create; a dry run changes nothing. The API server's own validation (the
// shares' range, a FlowSchema's rules) and the user's RBAC speak here, each
// error naming its document.
func dryRun(ctx context.Context, ed ports.ObjectEditor, cl ports.Cluster, objs []draftObject) error {
	for _, o := range objs {
		k, ok := cl.Kind(o.kind)
		if !ok {
			return fmt.Errorf("clusterdesk does not serve %s", o.kind)
		}
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.obj)
		if err != nil {
			return fmt.Errorf("document %d: %v", o.n, err)
		}
		u := &unstructured.Unstructured{Object: raw}
		u.SetAPIVersion(apiVersion)
		u.SetKind(k.Singular)
		cur, err := ed.Get(ctx, k, o.name)
		switch {
		case apierrors.IsNotFound(err):
			u.SetResourceVersion("")
			_, err = ed.Create(ctx, k, u, true)
		case err != nil:
		default:
			u.SetResourceVersion(cur.GetResourceVersion())
			_, err = ed.Update(ctx, k, u, true)
		}
		if err != nil {
			return fmt.Errorf("document %d (%s %s): the API server refused it in a dry run: %v", o.n, k.Singular, o.name, err)
		}
	}
	return nil
}
