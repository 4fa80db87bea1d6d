package main

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// Two CSRs (slots 0 and 1), each written once a second.
var tallyNames = []string{"bench-a", "bench-b"}

func TestCountLateEventsAreNotMistakenForTheNextWrite(t *testing.T) {
	// a is written at 0 and 1000 ms; each write gets its own message (ids 11,
	// 13); the tab reads both 1.5 s late, after the second write. The old count
	// took the first event for the second write and dropped the second.
	writes := []write{{seq: 1, at: at(0), slot: 0}, {seq: 2, at: at(500), slot: 1}, {seq: 3, at: at(1000), slot: 0}}
	msgs := []published{
		{Seq: 11, Rows: map[string]int64{"bench-a": 1}},
		{Seq: 12, Rows: map[string]int64{"bench-b": 2}},
		{Seq: 13, Rows: map[string]int64{"bench-a": 3}},
	}
	tab := tabLog{hello: 10, got: []receipt{{11, at(1500)}, {12, at(2000)}, {13, at(2500)}}}
	got := count(writes, tallyNames, msgs, 11, []tabLog{tab})
	if !got.complete() || got.expected != 3 || got.got != 3 || got.writes != 3 {
		t.Fatalf("all delivered, late: %+v", got)
	}
	want := []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond}
	if len(got.lat) != 3 || got.lat[0] != want[0] || got.lat[1] != want[1] || got.lat[2] != want[2] {
		t.Fatalf("latencies %v, want %v", got.lat, want)
	}
}

func TestCountAMissedMessageIsAMissEvenWhenALaterOneCarriesTheRow(t *testing.T) {
	writes := []write{{seq: 1, at: at(0), slot: 0}, {seq: 2, at: at(1000), slot: 0}}
	msgs := []published{
		{Seq: 11, Rows: map[string]int64{"bench-a": 1}},
		{Seq: 12, Rows: map[string]int64{"bench-a": 2}},
	}
	good := tabLog{hello: 10, got: []receipt{{11, at(10)}, {12, at(1010)}}}
	missed := tabLog{hello: 10, got: []receipt{{12, at(1010)}}}
	got := count(writes, tallyNames, msgs, 11, []tabLog{good, missed})
	if got.complete() || got.expected != 4 || got.got != 3 {
		t.Fatalf("one tab missed message 11: %+v", got)
	}
	// The missed write has no latency from that tab: 3 samples, not 4.
	if len(got.lat) != 3 {
		t.Fatalf("latencies %v", got.lat)
	}
}

func TestCountCoalescedWritesAreDeliveredByOneMessage(t *testing.T) {
	// Two writes of a within one hub interval: one message carries the later,
	// and delivers both (the protocol coalesces per object per interval).
	writes := []write{{seq: 1, at: at(0), slot: 0}, {seq: 2, at: at(10), slot: 0}}
	msgs := []published{{Seq: 5, Rows: map[string]int64{"bench-a": 2}}}
	tab := tabLog{hello: 4, got: []receipt{{5, at(40)}}}
	got := count(writes, tallyNames, msgs, 5, []tabLog{tab})
	if !got.complete() || got.messages != 1 || len(got.lat) != 2 {
		t.Fatalf("coalesced: %+v", got)
	}
}

func TestCountAWriteNoMessageCarriesIsUncovered(t *testing.T) {
	writes := []write{{seq: 1, at: at(0), slot: 0}, {seq: 2, at: at(1000), slot: 0}}
	msgs := []published{{Seq: 5, Rows: map[string]int64{"bench-a": 1}}}
	tab := tabLog{hello: 4, got: []receipt{{5, at(40)}}}
	got := count(writes, tallyNames, msgs, 5, []tabLog{tab})
	if got.complete() || got.uncovered != 1 {
		t.Fatalf("write 2 never published: %+v", got)
	}
}

func TestCountOwesOnlyMessagesAfterHelloAndOfTheRound(t *testing.T) {
	writes := []write{{seq: 7, at: at(0), slot: 1}}
	msgs := []published{
		{Seq: 3, Rows: map[string]int64{"bench-a": 6}}, // an earlier round's
		{Seq: 8, Rows: map[string]int64{"bench-b": 7}},
	}
	late := tabLog{hello: 9} // subscribed after message 8: not owed it
	ontime := tabLog{hello: 5, got: []receipt{{8, at(30)}, {8, at(31)}}}
	got := count(writes, tallyNames, msgs, 4, []tabLog{late, ontime})
	if got.messages != 1 || got.expected != 1 || got.got != 1 {
		t.Fatalf("owed: %+v", got)
	}
	if got.dupes != 1 || got.complete() {
		t.Fatalf("a message read twice is a fault: %+v", got)
	}
}
