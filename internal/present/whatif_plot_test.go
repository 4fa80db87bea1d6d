package present

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfsim"
)

// TestWhatIfPlotStaysInItsAreaAndSaysItsPeaks: every point lies in the
// plot area, the seats' top tick is at or above the highest value, and the
// description gives each configuration's peak for who cannot see it.
func TestWhatIfPlotStaysInItsAreaAndSaysItsPeaks(t *testing.T) {
	since := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	before := []apfsim.Sample{{Seats: 3, Limit: 3}, {Seats: 3, Limit: 3}, {Seats: 1, Limit: 3}}
	after := []apfsim.Sample{{Seats: 12, Limit: 174}, {Seats: 13, Limit: 174}, {Seats: 0, Limit: 174}}
	p := WhatIfPlot("plot-x", "x", since, since.Add(time.Hour), before, after)
	for _, pts := range []string{p.BeforeSeats, p.BeforeLimit, p.AfterSeats, p.AfterLimit} {
		fields := strings.Fields(pts)
		if len(fields) != 3 {
			t.Fatalf("points %q", pts)
		}
		for _, xy := range fields {
			x, _ := strconv.Atoi(strings.Split(xy, ",")[0])
			y, _ := strconv.Atoi(strings.Split(xy, ",")[1])
			if x < p.Left || x > p.Right || y < p.Top || y > p.Bottom {
				t.Errorf("point %s outside %d..%d × %d..%d", xy, p.Left, p.Right, p.Top, p.Bottom)
			}
		}
	}
	if top, _ := strconv.Atoi(p.YTicks[len(p.YTicks)-1].Label); top < 174 || p.YTicks[0].Label != "0" {
		t.Errorf("y ticks %+v", p.YTicks)
	}
	if p.XTicks[0].Label != "10:00" || p.XTicks[4].Label != "11:00" {
		t.Errorf("x ticks %+v", p.XTicks)
	}
	if !strings.Contains(p.Desc, "current configuration: at most 3 seats in use, limit up to 3") || !strings.Contains(p.Desc, "draft: at most 13 seats in use, limit up to 174") {
		t.Errorf("desc %q", p.Desc)
	}
}
