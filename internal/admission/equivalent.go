package admission

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Equivalents returns the resources the API server treats as the same as r
// for matchPolicy Equivalent, r first, from discovery's resource lists.
//
// The API server keys its EquivalentResourceRegistry by the storage prefix of
// each resource (k8s.io/apiserver pkg/server/config.go, Complete: "use the
// storage prefix as the key if possible"), so every group and version served
// from the same storage is equivalent: all versions of a resource in its
// group, and across groups e.g. core/v1 events and events.k8s.io/v1 events
// (formerly apps and extensions deployments). The webhook dispatcher
// (k8s.io/apiserver pkg/admission/plugin/webhook/generic/webhook.go,
// ShouldCallHook) tries, rule by rule, each of
// EquivalentResourcesFor(resource, subresource)
// (k8s.io/apimachinery pkg/runtime/mapper.go) once no rule matched the request
// as made. Discovery does not publish storage prefixes, but it publishes each
// resource's storageVersionHash, the hash of the version it is stored as:
// resources sharing storage share it. A subresource counts only in group
// versions that serve it. Without a hash (aggregated APIs may omit it), the
// same resource in other versions of its group is equivalent, as before.
func Equivalents(lists []*metav1.APIResourceList, r GVR, subresource string) []GVR {
	type entry struct {
		gvr  GVR
		hash string
		subs map[string]bool
	}
	var entries []entry
	var self *entry
	for _, l := range lists {
		if l == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		subs := map[string]map[string]bool{}
		for _, res := range l.APIResources {
			if parent, sub, ok := strings.Cut(res.Name, "/"); ok {
				if subs[parent] == nil {
					subs[parent] = map[string]bool{}
				}
				subs[parent][sub] = true
			}
		}
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") {
				continue
			}
			entries = append(entries, entry{gvr: GVR{Group: gv.Group, Version: gv.Version, Resource: res.Name}, hash: res.StorageVersionHash, subs: subs[res.Name]})
		}
	}
	for i := range entries {
		if entries[i].gvr == r {
			self = &entries[i]
		}
	}
	out := []GVR{r}
	for _, e := range entries {
		if e.gvr == r || (subresource != "" && !e.subs[subresource]) {
			continue
		}
		same := e.gvr.Group == r.Group && e.gvr.Resource == r.Resource
		if self != nil && self.hash != "" {
			same = e.hash == self.hash
		}
		if same {
			out = append(out, e.gvr)
		}
	}
	return out
}
