package insight

import (
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/crd"
)

// schemaFields remembers each CRD's count of schema fields per version (the
// detail page's versions table), per object version: the cache keeps schemas
// packed (kube.CRDSchemas), and decoding them for a count cost the largest
// real CRD ~14 MB of garbage and 60 ms per view. A changed CRD is a new
// resourceVersion, so its count is worked out again.
type schemaFields struct {
	mu     sync.Mutex
	byName map[string]fieldsAt
}

type fieldsAt struct {
	uid    types.UID
	rv     string
	fields map[string]int // version → fields below the schema's root
}

// maxCountedCRDs bounds the memo: past it (CRDs deleted over a long life,
// or more CRDs than any cluster has), it starts again.
const maxCountedCRDs = 10_000

// get returns the counts of c's schemas when they are known for this
// version of c.
func (s *schemaFields) get(c *apiextensionsv1.CustomResourceDefinition) (map[string]int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.byName[c.Name]
	if !ok || f.uid != c.UID || f.rv != c.ResourceVersion {
		return nil, false
	}
	return f.fields, true
}

// put counts the fields of c, a CRD with its schemas decoded, and keeps them.
func (s *schemaFields) put(c *apiextensionsv1.CustomResourceDefinition) {
	fields := map[string]int{}
	for _, v := range c.Spec.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			fields[v.Name] = crd.Fields(v.Schema.OpenAPIV3Schema)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byName == nil || len(s.byName) >= maxCountedCRDs {
		s.byName = map[string]fieldsAt{}
	}
	s.byName[c.Name] = fieldsAt{uid: c.UID, rv: c.ResourceVersion, fields: fields}
}
