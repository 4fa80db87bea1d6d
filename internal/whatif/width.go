package whatif

import "math"

// The work estimator's constants (k8s.io/apiserver v0.37.2
// pkg/util/flowcontrol/request: list_work_estimator.go and config.go).
const (
	bytesPerSeat                     = 100_000
	cacheWithStreamingMaxMemoryUsage = 1_000_000
	maxObjectSize                    = 1_500_000
	maximumListSeatsLimit            = 100 // with SizeBasedListCostEstimate, on by default since 1.34
)

// listSeats mirrors the API server's estimate of a LIST's seats
// (listWorkEstimator.estimate with seatsBasedOnObjectSize, the default
// since 1.34) for the LIST the traffic records: no limit, no selector, no
// resourceVersion, so a consistent read served from the watch cache
// (ShouldDelegateListMeta, pkg/storage/cacher/delegator). The objects held
// in memory at once are the resource's, all namespaces (the estimator keys
// its counts by group-resource), each of their average size, at most 1 MB
// for a list from the cache: a seat per 100 kB, at least one, at most the
// level's max seats (levelMax, 0: the estimator's 100). Objects 0
// (not known, or none): one seat, the estimator's minimum.
func listSeats(objects, bytes int64, levelMax int) int {
	if objects <= 0 {
		return 1
	}
	avg := int64(0)
	if bytes > 0 {
		avg = bytes / objects
	}
	if avg <= 0 {
		avg = maxObjectSize
	}
	memory := min(objects*avg, cacheWithStreamingMaxMemoryUsage)
	seats := int(math.Ceil(float64(memory) / bytesPerSeat))
	maxSeats := maximumListSeatsLimit
	if levelMax > 0 && levelMax < maxSeats {
		maxSeats = levelMax
	}
	return max(1, min(seats, maxSeats))
}
