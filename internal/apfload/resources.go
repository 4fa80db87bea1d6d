package apfload

import (
	dto "github.com/prometheus/client_model/go"
)

// ResourceStats is what the API server reports of a resource's stored
// objects: their count (apiserver_resource_objects) and the estimate of
// their serialized size in all (apiserver_resource_size_estimate_bytes,
// 0 when not reported), as its APF work estimator sees them.
type ResourceStats struct {
	Objects, Bytes int64
}

// ResourceKey is a resource's key as the work estimator's: resource.group
// (schema.GroupResource's String), the resource alone for the core group.
func ResourceKey(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// addResourceFamily reads one of the two resource gauges into into. A
// value of -1 is the API server's "could not count": left out.
func addResourceFamily(into map[string]ResourceStats, name string, fam *dto.MetricFamily) {
	for _, m := range fam.GetMetric() {
		labels := labelsOf(m)
		v := value(m)
		if v < 0 || labels["resource"] == "" {
			continue
		}
		key := ResourceKey(labels["group"], labels["resource"])
		st := into[key]
		if name == resourceObjects {
			st.Objects = int64(v)
		} else {
			st.Bytes = int64(v)
		}
		into[key] = st
	}
}
