package kube

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"weak"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// SchemaStubPrefix starts the description of the stub a cached CRD keeps in
// place of each version's openAPIV3Schema.
const SchemaStubPrefix = "(schema packed in clusterdesk's cache: "

// CRDSchemas holds the openAPIV3Schemas the CRD cache takes out of its
// objects, as deflated JSON, for exactly as long as the cached object (its
// stub) lives.
//
// Decoded, real-world schemas are ~95% of a CRD's heap: ~500 MiB per 1,000
// CRDs (Argo Workflows' are 2.8 MB of YAML each), against a 512 MiB pod.
// Their JSON deflates about tenfold, and only a CRD's detail, schema and YAML
// pages read them, one CRD per view. Compressed in memory rather than fetched
// again from the API server: pages keep reading the informer's object (no
// request, no second RBAC check, no stale-versus-live mismatch), and they
// keep working while the API server is away.
//
// Each packed schema is keyed by the stub that replaced it, weakly, and
// dropped by a runtime cleanup once that stub is unreachable: no event
// handler has to pair evictions with the informer's replacements, a page
// holding an older object can still unpack it, and the shallow copies
// client-go makes of listed items (meta.ExtractListWithAlloc, the pager)
// share the stub, hence the schema. A deep copy has stubs of its own, with
// no schema behind them: unpack the cached object itself.
type CRDSchemas struct {
	mu    sync.Mutex
	blobs map[weak.Pointer[apiextensionsv1.JSONSchemaProps]][]byte // deflated JSON
}

// NewCRDSchemas returns an empty store.
func NewCRDSchemas() *CRDSchemas {
	return &CRDSchemas{blobs: map[weak.Pointer[apiextensionsv1.JSONSchemaProps]][]byte{}}
}

// Len is the number of packed schemas still held.
func (s *CRDSchemas) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.blobs)
}

// Pack moves each version's openAPIV3Schema of c into s and leaves a stub
// whose description gives the schema's size and digest, so that a changed
// schema still changes the cached object (the watch feed diffs them).
// Versions with the same schema share one compressed copy. Pack is
// idempotent; a schema that cannot be encoded (never, for a decoded object)
// stays in c.
func (s *CRDSchemas) Pack(c *apiextensionsv1.CustomResourceDefinition) {
	bySum := map[[sha256.Size]byte][]byte{}
	for i := range c.Spec.Versions {
		v := &c.Spec.Versions[i]
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil || IsSchemaStub(v.Schema.OpenAPIV3Schema) {
			continue
		}
		raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(raw)
		blob, ok := bySum[sum]
		if !ok {
			if blob, err = deflate(raw); err != nil {
				continue
			}
			bySum[sum] = blob
		}
		stub := &apiextensionsv1.JSONSchemaProps{
			Description: fmt.Sprintf("%s%d bytes of JSON, sha256 %s; clusterdesk decodes it for the pages that show it)",
				SchemaStubPrefix, len(raw), hex.EncodeToString(sum[:8])),
		}
		key := weak.Make(stub)
		s.mu.Lock()
		s.blobs[key] = blob
		s.mu.Unlock()
		runtime.AddCleanup(stub, s.drop, key)
		v.Schema.OpenAPIV3Schema = stub
	}
}

func (s *CRDSchemas) drop(key weak.Pointer[apiextensionsv1.JSONSchemaProps]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.blobs, key)
}

// Unpack returns a deep copy of c with every packed schema decoded: the CRD
// as the API server served it. c must be the cached object (or a shallow
// copy), not a deep copy, whose stubs have no schema: an error. A CRD with
// nothing packed is returned copied.
func (s *CRDSchemas) Unpack(c *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	out := c.DeepCopy()
	decoded := map[*byte]*apiextensionsv1.JSONSchemaProps{} // by blob: versions sharing one decode it once
	for i, v := range c.Spec.Versions {
		if v.Schema == nil || !IsSchemaStub(v.Schema.OpenAPIV3Schema) {
			continue
		}
		s.mu.Lock()
		blob, ok := s.blobs[weak.Make(v.Schema.OpenAPIV3Schema)]
		s.mu.Unlock()
		if !ok || len(blob) == 0 {
			return nil, fmt.Errorf("the schema of %s %s is not in clusterdesk's cache (unpacking a deep copy of the cached object?)", c.Name, v.Name)
		}
		if d, ok := decoded[&blob[0]]; ok {
			out.Spec.Versions[i].Schema.OpenAPIV3Schema = d.DeepCopy()
			continue
		}
		var props apiextensionsv1.JSONSchemaProps
		if err := json.NewDecoder(flate.NewReader(bytes.NewReader(blob))).Decode(&props); err != nil {
			return nil, fmt.Errorf("unpack the schema of %s %s: %w", c.Name, v.Name, err)
		}
		decoded[&blob[0]], out.Spec.Versions[i].Schema.OpenAPIV3Schema = &props, &props
	}
	return out, nil
}

// IsSchemaStub reports whether s is the stub Pack leaves for a schema.
func IsSchemaStub(s *apiextensionsv1.JSONSchemaProps) bool {
	return s != nil && strings.HasPrefix(s.Description, SchemaStubPrefix) && s.Type == "" && s.Properties == nil
}

// flateWriters reuses compressors: each holds ~1 MiB of tables, and a LIST of
// a thousand CRDs packs them one after another.
var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression) // err only for a bad level
	return w
}}

func deflate(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(raw) / 8)
	w := flateWriters.Get().(*flate.Writer)
	defer flateWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	// buf's spare capacity would stay with the cached object.
	return bytes.Clone(buf.Bytes()), nil
}
