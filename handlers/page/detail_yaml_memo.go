package page

import (
	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// yamlMemoSize bounds the remembered YAML: objects' YAML is inline only up
// to yamlInlineMax (64 KiB of JSON), so at most a few MiB in the worst case,
// usually a few hundred KiB.
const yamlMemoSize = 128

// yamlMemo remembers, per object version, what SetYAML put on its page. The
// YAML of an object is half of what a detail page costs (JSON, then YAML, of
// the whole object, on every view; for a megabyte CRD the size probe alone
// costs tens of milliseconds), and an object seen again is usually unchanged:
// its UID and resourceVersion say so, so an entry is never stale.
var yamlMemo = mustLRU[string, yamlEntry](yamlMemoSize)

// yamlEntry is a detail page's YAML part: inline, or too big to inline.
type yamlEntry struct {
	yaml, note string
	size       string // for an object too big to inline: its size, as the page says it
}

func mustLRU[K comparable, V any](n int) *lru.Cache[K, V] {
	c, err := lru.New[K, V](n)
	if err != nil {
		panic(err) // only for n <= 0
	}
	return c
}

// yamlKey names one version of an object; "" when it has no resourceVersion
// (objects built in tests), which is never remembered.
func yamlKey(kind kube.KindID, name string, obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return yamlKeyOf(kind, name, m)
}

// yamlKeyOf is yamlKey from an object's metadata (the cache's, not a copy).
func yamlKeyOf(kind kube.KindID, name string, m metav1.Object) string {
	if m.GetResourceVersion() == "" {
		return ""
	}
	return string(kind) + "\x00" + name + "\x00" + string(m.GetUID()) + "\x00" + m.GetResourceVersion()
}
