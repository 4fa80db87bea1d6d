package main

import (
	"io"
	"strings"
	"testing"
)

func TestCursorSeqBytesReadsWhatCursorSeqReads(t *testing.T) {
	for _, id := range []string{"1700000000abc-42", "e-0", "e-18446744073709551615", "e-18446744073709551616", "e-", "42", "e-4x2", ""} {
		want, wantOK := cursorSeq(id)
		got, ok := cursorSeqBytes([]byte(id))
		if ok != wantOK || ok && got != want {
			t.Errorf("%q: got %d %v, want %d %v", id, got, ok, want, wantOK)
		}
	}
}

// A tab reads its stream into the log the tally counts: a message it did not
// read is a miss there, whatever it read after.
func TestATabsReadsReachTheTally(t *testing.T) {
	b := newBoard(tallyNames)
	writes := []write{{seq: 1, at: at(0), slot: 0}, {seq: 2, at: at(0), slot: 1}}
	for i := range writes {
		b.add(&writes[i])
	}
	row := func(name string) string { return `data: <tr id="row-csrs-` + name + `"><td>x</td></tr>` + "\n" }
	stream := ": hb 1\n\n" +
		"id: e-10\ndata: csrs\nevent: hello\n\n" +
		"id: e-11\n" + row("bench-a") + "event: csrs-rows\n\n" +
		// e-12 (bench-b's) is never sent: the tab misses it.
		"id: e-13\n" + row("bench-a") + row("bench-b") + "event: csrs-rows\r\n\r\n"
	c := &client{hello: make(chan struct{}), done: make(chan struct{}), seen: make([]int64, len(b.latest))}
	c.read(io.NopCloser(strings.NewReader(stream)), b)
	if c.tab.hello != 10 || len(c.tab.got) != 2 || c.tab.got[0].seq != 11 || c.tab.got[1].seq != 13 || c.reads.Load() != 2 {
		t.Fatalf("tab log %+v (reads %d)", c.tab, c.reads.Load())
	}
	if c.got.Load() != 2 { // one sample per write seen: bench-a's and bench-b's
		t.Fatalf("samples %v", c.lat)
	}
	msgs := []published{
		{Seq: 11, Rows: map[string]int64{"bench-a": 1}},
		{Seq: 12, Rows: map[string]int64{"bench-b": 2}},
		{Seq: 13, Rows: map[string]int64{"bench-a": 1, "bench-b": 2}},
	}
	got := count(writes, tallyNames, msgs, 11, []tabLog{c.tab})
	if got.complete() || got.expected != 3 || got.got != 2 {
		t.Fatalf("the tab missed e-12: %+v", got)
	}
}
