package main

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Where a round's CPU goes besides the console: the tabs share the machine
// with it (they read and parse every event in this process), and so does
// whatever else runs. A latency read on a machine whose cores are busy is
// mostly waiting for one; these say how busy they were.

// cpuWindow is the CPU this process and the whole machine used from its start.
type cpuWindow struct {
	at            time.Time
	self, machine float64 // seconds
	machOK        bool
}

func startCPUWindow() cpuWindow {
	w := cpuWindow{at: time.Now()}
	w.self = cpuSeconds()
	w.machine, w.machOK = machineBusySeconds()
	return w
}

// end returns this process's CPU seconds and the machine's busy cores (all
// processes, user + system + interrupts) since the window's start.
func (w cpuWindow) end() (self, busyCores float64) {
	self = cpuSeconds() - w.self
	if m, ok := machineBusySeconds(); ok && w.machOK {
		busyCores = (m - w.machine) / time.Since(w.at).Seconds()
	}
	return self, busyCores
}

// machineBusySeconds is the time all CPUs spent not idle since boot, from
// /proc/stat's first line (user nice system idle iowait irq softirq steal,
// in USER_HZ = 100 on Linux).
func machineBusySeconds() (float64, bool) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	busy := 0.0
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, false
		}
		busy += n
	}
	return busy / 100, true
}
