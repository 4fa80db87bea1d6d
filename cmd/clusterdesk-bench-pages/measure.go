package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// stats summarises the requests of one measurement.
type stats struct {
	N        int
	P50, P99 time.Duration
	Bytes    int64 // of the last response (pages differ only in timestamps)
}

// percentile returns the p-th percentile (0 < p ≤ 100) of sorted samples by
// the nearest-rank method: the smallest sample with at least p% at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100 + 0.999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// sample runs fetch n times in a row (after warm warm-up calls that are not
// counted), or until limit has passed once at least minN have run, and
// summarises the durations.
func sample(n, minN, warm int, limit time.Duration, fetch func() (int64, error)) (stats, error) {
	for range warm {
		if _, err := fetch(); err != nil {
			return stats{}, err
		}
	}
	var durations []time.Duration
	var bytes int64
	start := time.Now()
	for len(durations) < n && (len(durations) < minN || time.Since(start) < limit) {
		t := time.Now()
		b, err := fetch()
		if err != nil {
			return stats{}, err
		}
		durations = append(durations, time.Since(t))
		bytes = b
	}
	slices.Sort(durations)
	return stats{N: len(durations), P50: percentile(durations, 50), P99: percentile(durations, 99), Bytes: bytes}, nil
}

// get fetches url with client, reads the whole body and returns its size;
// anything but 200 is an error.
func get(client *http.Client, url string, header http.Header) (int64, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, err
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return n, nil
}

// getAll fetches each url in turn and returns the total size: what one view
// costs a dashboard that needs several lists.
func getAll(client *http.Client, urls []string, header http.Header) (int64, error) {
	var total int64
	for _, u := range urls {
		n, err := get(client, u, header)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
