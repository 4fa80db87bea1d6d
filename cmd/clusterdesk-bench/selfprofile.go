package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startSelfProfile starts a CPU profile of this process (the simulated tabs
// and the driver, which share the machine's cores with the console: what
// they cost is latency the console's numbers include), written to path when
// the returned function is called.
func startSelfProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("tabs profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
