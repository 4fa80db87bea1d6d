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
	Target  string // targetList, targetDetail, or "" for none
}

// The targets of issue 15: a list, queue or filter view at least 10× faster
// than the raw LIST of the same objects; a detail page at most 2× a raw GET;
// every page at most 400 KB; the console's RSS under 300 MiB with the shapes.
const (
	targetList   = "list"
	targetDetail = "detail"
	maxPageBytes = 400 * 1000
	maxRSS       = 300 << 20
)

// verdict says whether r meets its target and page weight, e.g. "≥10× ok".
func verdict(r row) string {
	if r.Console.P50 <= 0 {
		return "-"
	}
	x := float64(r.Raw.P50) / float64(r.Console.P50)
	var want string
	ok := true
	switch r.Target {
	case targetList:
		want, ok = "≥10×", x >= 10
	case targetDetail:
		want, ok = "≤2× GET", x >= 0.5
	}
	if r.Console.Bytes > maxPageBytes {
		want, ok = strings.TrimSpace(want+" ≤400 KB"), false
	}
	if want == "" {
		return "-"
	}
	if ok {
		return want + " ok"
	}
	return want + " MISS"
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
	writeRows(w, rows)
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

// writeRows prints the table of pages beside their raw fetches.
func writeRows(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "page\tobjects\tp50\tp99\tbytes\tn\t\traw: what\tp50\tp99\tbytes\tn\tp50 ratio\ttarget\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n",
			shorten(r.Page), r.Objects, ms(r.Console.P50), ms(r.Console.P99), size(r.Console.Bytes), r.Console.N,
			r.What, ms(r.Raw.P50), ms(r.Raw.P99), size(r.Raw.Bytes), r.Raw.N, ratio(r.Raw.P50, r.Console.P50), verdict(r))
	}
	_ = tw.Flush()
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

// writeShapes prints the shapes' own lines (their rows are in the table,
// after the main ones): what the cluster held, start-up, and memory after
// sync and after the page views against the RSS target.
func writeShapes(w io.Writer, s *shapesResult) {
	c := s.Counts
	writeRows(w, s.Rows)
	fmt.Fprintf(w, "shapes: a second devcluster with %d CSRs (asked: %d, of them %d decided, a storm of %d pending kubelet-serving requests of one node with 253-character names, %d with %d SANs, 1 with a 256 KiB annotation; and %d pending of one service account, every subject different) "+
		"and %d CRDs (asked: %d from the real schemas under generated groups, the largest first, one with a 253-character name, one with a 256 KiB annotation; %d with %d versions); seeding this run took %s\n",
		s.CSRs, c.CSRs, min(c.Decided, c.regular()), c.Storm, c.SANs, sansPerCSR, c.RequesterStorm, s.CRDs, c.CRDs, c.ManyVersionCRDs, manyVersions, s.SeedTime.Round(time.Second))
	rssOK := func(b int64) string {
		if b < maxRSS {
			return "ok"
		}
		return "MISS"
	}
	for _, r := range []struct {
		how string
		m   memoryReading
	}{{"GOMEMLIMIT=" + deployGOMEMLIMIT + " (as deploy/ runs it)", s.Limited}, {"no GOMEMLIMIT", s.Unlimited}} {
		m := r.m
		fmt.Fprintf(w, "shapes memory, %s: console ready %s, first /csrs %s after process start; RSS %s after sync (< 300 MiB %s), %s after %d page views (< 300 MiB %s); Go heap live at the last GC %s after sync, %s after the views (after a full GC: %s, %s); console CPU %.2f s to sync, %.2f s for the views\n",
			r.how, ms(m.Ready), ms(m.First), size(m.RSSSynced), rssOK(m.RSSSynced), size(m.RSSViewed), pageViews, rssOK(m.RSSViewed),
			size(int64(m.HeapSynced)<<20), size(int64(m.HeapViewed)<<20), size(int64(m.FullGCSynced)<<20), size(int64(m.FullGCViewed)<<20), m.CPUSynced.Seconds(), m.CPUViewed.Seconds())
	}
}

// shorten keeps a table row readable when its page has a 253-character name:
// the middle of a long path segment gives way to "…".
func shorten(page string) string {
	const keep = 24
	parts := strings.Split(page, "/")
	for i, p := range parts {
		if len(p) > 2*keep+8 {
			parts[i] = fmt.Sprintf("%s…%s[%d chars]", p[:keep], p[len(p)-keep:], len(p))
		}
	}
	return strings.Join(parts, "/")
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
