package kube

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
)

// OpenAPI fetches the API server's OpenAPI v3 documents (/openapi/v3/apis/<group>/<version>)
// for the editor's field documentation, and keeps each per server version: a
// document changes only when the server does (for built-in kinds).
type OpenAPI struct {
	client openapi.ClientWithContext

	mu    sync.Mutex
	cache map[string][]byte // serverVersion + " " + group/version path → JSON document
}

// NewOpenAPI returns an OpenAPI fetcher for the identity in cfg. It does no network I/O.
func NewOpenAPI(cfg *rest.Config) (*OpenAPI, error) {
	d, err := discovery.NewDiscoveryClientForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("openapi client: %w", err)
	}
	return &OpenAPI{client: openapi.NewClientWithContext(d.RESTClient()), cache: map[string][]byte{}}, nil
}

// Document returns the OpenAPI v3 document (JSON) of k's group and version on
// the server whose version is serverVersion.
func (o *OpenAPI) Document(ctx context.Context, k Kind, serverVersion string) ([]byte, error) {
	if k.Version == "" {
		return nil, fmt.Errorf("%s: %w", k.Title, errNoVersion)
	}
	path := "apis/" + k.Group + "/" + k.Version
	if k.Group == "" {
		path = "api/" + k.Version
	}
	key := serverVersion + " " + path
	o.mu.Lock()
	doc, ok := o.cache[key]
	o.mu.Unlock()
	if ok {
		return doc, nil
	}
	paths, err := o.client.PathsWithContext(ctx)
	if err != nil {
		return nil, err
	}
	gv, ok := paths[path]
	if !ok {
		return nil, fmt.Errorf("the API server publishes no OpenAPI v3 document for %s", path)
	}
	doc, err = gv.SchemaWithContext(ctx, "application/json")
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.cache[key] = doc
	o.mu.Unlock()
	return doc, nil
}
