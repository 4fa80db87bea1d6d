package present

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfsim"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The what-if's plot is drawn on the server as inline SVG (views/pages,
// whatif_plot.templ): no script, nothing external, nothing the strict CSP
// refuses (presentation attributes, no style attributes). Here are its
// coordinates, in the SVG's own units.
const (
	plotWidth, plotHeight = 640, 220
	plotLeft, plotRight   = 52, 600
	plotTop, plotBottom   = 14, 180
)

// WhatIfPlot is the plot of a level's seats in use over since–until, before
// (the current configuration) and after (the draft), against each one's
// limit; either may be nil.
func WhatIfPlot(id, level string, since, until time.Time, before, after []apfsim.Sample) *model.WhatIfPlot {
	top := 1
	for _, ss := range [][]apfsim.Sample{before, after} {
		for _, s := range ss {
			top = max(top, s.Seats, s.Limit)
		}
	}
	top = niceCeil(top)
	p := &model.WhatIfPlot{ID: id, Width: plotWidth, Height: plotHeight,
		Left: plotLeft, Top: plotTop, Right: plotRight, Bottom: plotBottom,
		Title:  "Seats in use in " + level + " over the window",
		XLabel: "time (UTC)", YLabel: "seats"}
	p.BeforeSeats = polyline(before, top, func(s apfsim.Sample) int { return s.Seats })
	p.BeforeLimit = polyline(before, top, func(s apfsim.Sample) int { return s.Limit })
	p.AfterSeats = polyline(after, top, func(s apfsim.Sample) int { return s.Seats })
	p.AfterLimit = polyline(after, top, func(s apfsim.Sample) int { return s.Limit })
	for i := 0; i <= 2; i++ {
		v := top * i / 2
		p.YTicks = append(p.YTicks, model.PlotTick{At: yOf(v, top), Label: strconv.Itoa(v)})
	}
	span := until.Sub(since)
	layout := "15:04"
	if span > 24*time.Hour {
		layout = "Jan 2 15:04"
	} else if span < 10*time.Minute {
		layout = "15:04:05"
	}
	for i := 0; i <= 4; i++ {
		at := since.Add(span * time.Duration(i) / 4)
		p.XTicks = append(p.XTicks, model.PlotTick{At: plotLeft + (plotRight-plotLeft)*i/4, Label: at.UTC().Format(layout)})
	}
	p.Desc = plotDesc(level, before, after)
	return p
}

// plotDesc says in words what the plot shows, for who cannot see it.
func plotDesc(level string, before, after []apfsim.Sample) string {
	peak := func(ss []apfsim.Sample) (seats, limit int) {
		for _, s := range ss {
			seats, limit = max(seats, s.Seats), max(limit, s.Limit)
		}
		return
	}
	var parts []string
	if before != nil {
		s, l := peak(before)
		parts = append(parts, fmt.Sprintf("current configuration: at most %d seats in use, limit up to %d", s, l))
	}
	if after != nil {
		s, l := peak(after)
		parts = append(parts, fmt.Sprintf("draft: at most %d seats in use, limit up to %d", s, l))
	}
	return "Seats in use in " + level + " over the window; " + strings.Join(parts, "; ") + "."
}

// polyline is the points of one series, "" without samples.
func polyline(ss []apfsim.Sample, top int, v func(apfsim.Sample) int) string {
	if len(ss) == 0 {
		return ""
	}
	var b strings.Builder
	n := len(ss)
	for i, s := range ss {
		x := plotLeft
		if n > 1 {
			x = plotLeft + (plotRight-plotLeft)*i/(n-1)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d,%d", x, yOf(v(s), top))
	}
	return b.String()
}

func yOf(v, top int) int { return plotBottom - (plotBottom-plotTop)*v/top }

// niceCeil rounds n up to 2, 4, 6, 8 or 10 times a power of ten: an even
// top, so the middle tick is a whole number of seats.
func niceCeil(n int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{2, 4, 6, 8, 10} {
			if m*p >= n {
				return m * p
			}
		}
	}
}
