package page

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// yamlInlineMax is the largest object (its JSON) whose YAML a detail page
// carries inline. A larger object's YAML (the biggest real CRDs are megabytes)
// is loaded when the person opens it: the page stays light and quick to
// render. The size is taken from the JSON encoding, about ten times cheaper
// than the YAML (30 ms against 300 ms for a 1.2 MiB CRD).
const yamlInlineMax = 64 << 10

// YAMLNote says what the YAML from the shared cache leaves out beyond
// managedFields (never shown): "" when nothing.
func YAMLNote(yaml string) string {
	if !strings.Contains(yaml, kube.StrippedPrefix) {
		return ""
	}
	return "clusterdesk's cache keeps the last-applied-configuration annotation (kubectl's copy of the whole object) only as its size and digest; the API server has it whole (kubectl get -o yaml). managedFields are not shown."
}

// SetYAML puts obj's YAML into a detail page: inline when small, else a link
// the page loads it from on demand.
func SetYAML(p *model.DetailPage, kind kube.KindID, name string, obj runtime.Object) error {
	key := yamlKey(kind, name, obj)
	e, ok := yamlMemo.Get(key)
	if !ok || key == "" {
		var err error
		if e, err = objectYAMLEntry(obj); err != nil {
			return err
		}
		if key != "" {
			yamlMemo.Add(key, e)
		}
	}
	e.apply(p, kind, name)
	return nil
}

// apply puts the entry on a detail page: the YAML inline, or the link it
// loads from.
func (e yamlEntry) apply(p *model.DetailPage, kind kube.KindID, name string) {
	if e.size != "" {
		p.YAMLHref = urls.YAML(kind, name)
		p.YAMLSize = e.size
		return
	}
	p.YAML, p.YAMLNote = e.yaml, e.note
}

// SetCachedYAML is SetYAML for an object of the shared cache: the memo is asked with the
// cache's own metadata first, so that an object seen before is not copied
// (for a CRD, its schemas decoded: ~14 MB of garbage per view of the largest
// real one) for YAML the page already has.
func SetCachedYAML(p *model.DetailPage, cluster ports.Cluster, kind kube.KindID, name string) error {
	m, err := cluster.Meta(kind, name)
	if err != nil {
		return err
	}
	if key := yamlKeyOf(kind, name, m); key != "" {
		if e, ok := yamlMemo.Get(key); ok {
			e.apply(p, kind, name)
			return nil
		}
	}
	obj, err := cluster.Object(kind, name)
	if err != nil {
		return err
	}
	return SetYAML(p, kind, name, obj)
}

// objectYAMLEntry renders obj's YAML part of a detail page.
func objectYAMLEntry(obj runtime.Object) (yamlEntry, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return yamlEntry{}, err
	}
	if len(raw) > yamlInlineMax {
		return yamlEntry{size: "a " + yamlSize(len(raw)) + " object"}, nil
	}
	y, err := kube.YAML(obj)
	if err != nil {
		return yamlEntry{}, err
	}
	return yamlEntry{yaml: y, note: YAMLNote(y)}, nil
}

func yamlSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
