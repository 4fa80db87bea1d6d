package main

import (
	"time"
)

// receipt is one rows event a tab read: the sequence of its id, and when.
type receipt struct {
	seq uint64
	at  time.Time
}

// tabLog is what one tab read: its hello's sequence (it is owed every message
// published after it) and its rows events in order.
type tabLog struct {
	hello uint64
	got   []receipt
}

// tally is a round's count of deliveries against the publish log.
//
// The promise (internal/live/doc.go): the hub coalesces changes per object per
// interval, and every message it publishes reaches every subscribed tab. So a
// tab is owed each CSR rows message published after its hello (each exactly
// once, by id); a write is delivered to a tab by the first message whose row
// carries that write or a later one (coalescing; a later message of the row
// does not stand in for a missed one: that message itself is owed). Counting by
// id rather than by "the latest write of the row" keeps a late event (fan-out
// more than a CSR's write interval behind) from being taken for the next write
// and the next event from being dropped as a repeat.
type tally struct {
	messages  int // rows messages published (carrying a bench row) in the round
	expected  int // deliveries owed: per tab, the messages after its hello
	got       int // deliveries read (each owed message once per tab)
	dupes     int // owed messages a tab read more than once
	writes    int // writes driven in the round
	uncovered int // writes no published message carries (lost by the hub)
	lat       []time.Duration
	spread    []time.Duration // per write: its last tab's latency - its first's
}

// complete reports whether every write was published and every owed message read.
func (t tally) complete() bool {
	return t.uncovered == 0 && t.got == t.expected && t.dupes == 0
}

// count tallies a round: writes (each with the board slot of its CSR, names
// gives the slot's name), the publish log's messages in publish order, and
// each tab's reads. Only messages published from firstSeq on count (the
// round's; earlier ones went to an earlier round's tabs).
func count(writes []write, names []string, msgs []published, firstSeq uint64, tabs []tabLog) tally {
	var t tally
	type row struct {
		msg uint64
		seq int64
	}
	rows := map[string][]row{} // per CSR name, the messages carrying it in order
	owed := map[uint64]bool{}
	for _, m := range msgs {
		if m.Seq < firstSeq {
			continue
		}
		owed[m.Seq] = true
		for name, s := range m.Rows {
			rows[name] = append(rows[name], row{m.Seq, s})
		}
	}
	t.messages = len(owed)
	t.writes = len(writes)

	// Which message delivers each write: the first of its row at or after it.
	by := make([]uint64, len(writes)) // 0: none
	for i, w := range writes {
		for _, r := range rows[names[w.slot]] {
			if r.seq >= w.seq {
				by[i] = r.msg
				break
			}
		}
		if by[i] == 0 {
			t.uncovered++
		}
	}

	first := make([]time.Duration, len(writes))
	last := make([]time.Duration, len(writes))
	seen := make([]bool, len(writes))
	for _, tab := range tabs {
		read := make(map[uint64]time.Time, len(tab.got))
		for _, r := range tab.got {
			if !owed[r.seq] || r.seq <= tab.hello {
				continue
			}
			if _, again := read[r.seq]; again {
				t.dupes++
				continue
			}
			read[r.seq] = r.at
		}
		for seq := range owed {
			if seq > tab.hello {
				t.expected++
			}
		}
		t.got += len(read)
		for i, w := range writes {
			at, ok := read[by[i]]
			if by[i] == 0 || !ok {
				continue
			}
			lat := at.Sub(w.at)
			t.lat = append(t.lat, lat)
			if !seen[i] || lat < first[i] {
				first[i] = lat
			}
			if !seen[i] || lat > last[i] {
				last[i] = lat
			}
			seen[i] = true
		}
	}
	for i := range writes {
		if seen[i] {
			t.spread = append(t.spread, last[i]-first[i])
		}
	}
	return t
}
