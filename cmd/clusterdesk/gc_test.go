package main

import (
	"runtime/debug"
	"testing"
)

// TestDefaultGOGCOnlyWhenUnset: the console's GC target applies when the
// operator set no GOGC, and an operator's GOGC is left alone.
func TestDefaultGOGCOnlyWhenUnset(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	if setDefaultGOGC(func(string) string { return "200" }) {
		t.Error("set with GOGC=200")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=200 given, the target became %d", got)
	}
	if !setDefaultGOGC(func(string) string { return "" }) {
		t.Error("not set without GOGC")
	}
	if got := debug.SetGCPercent(100); got != defaultGOGC {
		t.Errorf("without GOGC the target is %d, want %d", got, defaultGOGC)
	}
}
