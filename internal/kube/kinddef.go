package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// kindDef is one entry of the registry (kinds.go).
type kindDef struct {
	Kind
	served []readableVersion // best first
}

// isFollowed reports whether id's informer comes from outside the Cache
// (readableVersion.followed).
func isFollowed(id KindID) bool {
	d, _ := definition(id)
	return len(d.served) == 1 && d.served[0].followed
}

// readableVersion is one version of a kind the console can read.
type readableVersion struct {
	version string
	// watch returns the list-watch of this version and an empty object of its Go type.
	watch func(c *Cache, report func(error)) (cache.ListerWatcher, runtime.Object)
	// toV1 converts a cached object of an older version to the Go type the
	// listers return for the kind; nil when the cached type is that type.
	toV1 func(any) (any, error)
	// followed marks the one version of a kind whose informer is not the
	// Cache's own but a PolicyCache's (follow.go), started and dropped as its
	// CRD comes and goes: discovery and the start-up access checks skip it,
	// and watch is nil.
	followed bool
}

// watchWith builds a readableVersion's watch from a typed client: O is the
// object's Go type, L its list's.
func watchWith[O any, PO interface {
	*O
	runtime.Object
}, L runtime.Object](client func(*Cache) listWatchClient[L]) func(*Cache, func(error)) (cache.ListerWatcher, runtime.Object) {
	return func(c *Cache, report func(error)) (cache.ListerWatcher, runtime.Object) {
		return listWatch[L](client(c), report, streamsInitialLists(c.ServerVersion())), PO(new(O))
	}
}

// convertWith adapts a typed conversion to readableVersion.toV1.
func convertWith[From, To any](f func(From) (To, error)) func(any) (any, error) {
	return func(o any) (any, error) { return f(o.(From)) }
}

// definition returns the registry entry of id.
func definition(id KindID) (kindDef, bool) {
	for _, d := range registry {
		if d.ID == id {
			return d, true
		}
	}
	return kindDef{}, false
}

// candidateVersions returns, best first, the versions of k the console can read.
func candidateVersions(k Kind) []string {
	d, _ := definition(k.ID)
	out := make([]string, 0, len(d.served))
	for _, s := range d.served {
		out = append(out, s.version)
	}
	return out
}

// servedAs returns how the console reads k at its chosen version.
func servedAs(k Kind) (readableVersion, error) {
	d, ok := definition(k.ID)
	if ok {
		for _, s := range d.served {
			if s.version == k.Version {
				return s, nil
			}
		}
	}
	return readableVersion{}, fmt.Errorf("kube: the console cannot read %s at version %q", k.ID, k.Version)
}
