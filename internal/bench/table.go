package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one page and what the same view costs a dashboard without a cache.
type row struct {
	Page    string // the URL path measured
	What    string // what the raw side fetches
	Objects int    // objects the page is about
	Console stats
	Raw     stats
}

// startup is what the console costs to start and hold the cluster.
type startup struct {
	Listening, Ready, FirstPage time.Duration // from process start
	FirstPagePath               string
	RSSReady, RSSEnd            int64 // bytes
	HeapMiB, GCs                int   // live heap after the last GC, and GCs so far
	Objects                     int   // objects in the cache
	KindHeaps                   []kindHeap
}

// writeReport prints the one table and the startup and memory lines.
func writeReport(w io.Writer, header string, rows []row, s startup) {
	fmt.Fprintln(w, header)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "page\tobjects\tp50\tp99\tbytes\tn\t\traw: what\tp50\tp99\tbytes\tn\tp50 ratio\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t\t%s\t%s\t%s\t%s\t%d\t%s\t\n",
			r.Page, r.Objects, ms(r.Console.P50), ms(r.Console.P99), size(r.Console.Bytes), r.Console.N,
			r.What, ms(r.Raw.P50), ms(r.Raw.P99), size(r.Raw.Bytes), r.Raw.N, ratio(r.Raw.P50, r.Console.P50))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "startup: listening %s, ready (cache synced) %s, first page (%s) %s after process start\n",
		ms(s.Listening), ms(s.Ready), s.FirstPagePath, ms(s.FirstPage))
	per := func(b int64) string {
		if s.Objects == 0 {
			return "-"
		}
		return size(b * 1000 / int64(s.Objects))
	}
	heap := int64(s.HeapMiB) << 20
	fmt.Fprintf(w, "memory: RSS %s after sync, %s after the page runs; Go heap %s live after the last GC (%d GCs); %d objects cached: per 1,000 objects RSS %s, heap %s\n",
		size(s.RSSReady), size(s.RSSEnd), size(heap), s.GCs, s.Objects, per(s.RSSEnd), per(heap))
	writeKindHeaps(w, s.KindHeaps)
	for _, r := range rows {
		if r.Console.P50 > time.Second || r.Console.P99 > time.Second {
			fmt.Fprintf(w, "SLOW: %s takes over 1 s (p50 %s, p99 %s) with %d objects\n", r.Page, ms(r.Console.P50), ms(r.Console.P99), r.Objects)
		}
	}
}

// writeKindHeaps prints the cache heap per kind.
func writeKindHeaps(w io.Writer, heaps []kindHeap) {
	if len(heaps) == 0 {
		return
	}
	var parts []string
	for _, k := range heaps {
		perK := "-"
		if k.Objects > 0 {
			perK = size(k.Bytes*1000/int64(k.Objects)) + " per 1,000"
		}
		parts = append(parts, fmt.Sprintf("%s %d objects %s (%s)", k.ID, k.Objects, size(k.Bytes), perK))
	}
	fmt.Fprintf(w, "cache heap per kind (clusterdesk's internal/kube cache alone, one kind at a time): %s\n", strings.Join(parts, "; "))
}

// writeScale prints the scale case's own startup and memory line (its rows
// are in the table, after the main ones).
func writeScale(w io.Writer, s *scaleResult) {
	seeded := "all there from an earlier run"
	if s.Seeded > 0 {
		seeded = fmt.Sprintf("%d created in %s (%.0f/s)", s.Seeded, s.SeedTime.Round(time.Second), float64(s.Seeded)/s.SeedTime.Seconds())
	}
	fmt.Fprintf(w, "scale case: a second devcluster with %d CSRs (%s); the rows above marked (first page), (filtered), (deep page) are /csrs on it, 100 rows per page, filters, counts and sort over every CSR; "+
		"console ready %s and first /csrs page %s after process start; RSS %s after the first page, Go heap %s live after the last GC\n",
		s.CSRs, seeded, ms(s.Ready), ms(s.First), size(s.RSS), size(int64(s.HeapMiB)<<20))
}

// ms formats a duration in milliseconds with sensible precision.
func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f ms", f)
	case f >= 10:
		return fmt.Sprintf("%.1f ms", f)
	default:
		return fmt.Sprintf("%.2f ms", f)
	}
}

// size formats bytes in binary units.
func size(b int64) string {
	const k = 1024
	switch {
	case b >= k*k*k:
		return fmt.Sprintf("%.2f GiB", float64(b)/(k*k*k))
	case b >= k*k:
		return fmt.Sprintf("%.1f MiB", float64(b)/(k*k))
	case b >= k:
		return fmt.Sprintf("%.1f KiB", float64(b)/k)
	default:
		return fmt.Sprintf("%d B", b)
	}
}

// ratio is how many times faster the console's page is than the raw fetch.
func ratio(raw, page time.Duration) string {
	if page <= 0 {
		return "-"
	}
	r := float64(raw) / float64(page)
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", r), ".0") + "×"
}
