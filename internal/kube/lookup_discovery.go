package kube

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
)

// ResourceLists returns, for the interception form's matchPolicy Equivalent,
// the discovery documents of every group version that serves a resource named
// resource, with its subresources. Resources sharing storage are equivalent,
// and discovery tells them by their storageVersionHash, which only the
// per-group-version documents carry (aggregated discovery leaves it out): so
// one aggregated request finds the group versions, then one GET each (usually
// one to three) reads their documents. A group version that fails to answer is
// left out rather than failing the whole answer.
func (l *Lookup) ResourceLists(ctx context.Context, resource string) ([]*metav1.APIResourceList, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, all, err := l.client.Discovery().ServerGroupsAndResources()
	if err != nil && !(discovery.IsGroupDiscoveryFailedError(err) && len(all) > 0) {
		return nil, err
	}
	var out []*metav1.APIResourceList
	for _, gv := range all {
		if gv == nil || !servesResource(gv, resource) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		full, err := l.client.Discovery().ServerResourcesForGroupVersion(gv.GroupVersion)
		if err != nil {
			continue
		}
		out = append(out, full)
	}
	return out, nil
}

func servesResource(l *metav1.APIResourceList, resource string) bool {
	for _, r := range l.APIResources {
		if name, _, _ := strings.Cut(r.Name, "/"); name == resource {
			return true
		}
	}
	return false
}
