//go:build !race

package edit

// raceAllocFactor scales allocation bounds for the race detector; 1 without it.
const raceAllocFactor = 1
