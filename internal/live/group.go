package live

import (
	"bytes"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/r3labs/sse/v2"
)

// The connections that receive the same topics share one library stream (a
// group): a message is handed to the library once per group, and the library's
// stream goroutine sends it to each connection's subscriber channel. A
// connection costs no stream goroutine of its own and no channel hop per event.
//
// The library's stream goroutine sends to a subscriber with a blocking channel
// send (64 slots): one connection that fell behind would hold up the whole
// group. So no connection is ever let near 64 queued events:
//
//   - Every event pushed to a group has a key, increasing within the group: a
//     message's is its stream sequence shifted left (keyShift), a heartbeat's
//     the group's last key plus one (its comment carries it: "hb <key>").
//   - A connection's writer reads the key of each event as the library writes
//     it (the id line, or the heartbeat comment) and stores it (conn.mark): every
//     event of the group with a larger key is still queued for it.
//   - The group remembers the keys of its last queue events (the ring). Before
//     an event is pushed, a connection whose mark is below the oldest of them
//     has queue events waiting: it is evicted. So at most queue events wait for
//     a connection counted this way, plus at most streamBuffer pushed before it
//     joined (which its writer skips: their keys are at or below its first
//     mark), and queue+streamBuffer is at most the library's 64.
//
// A connection joins its group while holding Streams.mu from before the
// library registers its subscriber until its first flush, so no event is
// pushed in between: what it must not receive (pushed before its hello) has a
// key at or below the group's last key when it joined, and its writer skips it.
const (
	// subscriberSlots is the library's fixed subscriber channel size (sse v2.10.0 stream.go addSubscriber).
	subscriberSlots = 64
	// streamBuffer is each group's stream channel size (sse.Server.BufferSize).
	streamBuffer = 8
	// maxQueue is the most events that may wait for one connection.
	maxQueue = subscriberSlots - streamBuffer
	keyShift = 20
)

// group is the connections of one topic set and their library stream.
type group struct {
	id     string   // the library stream's id
	topics []string // sorted
	conns  map[*conn]struct{}
	refs   int    // connections in Serve with this group (attached or not)
	last   uint64 // key of the last event pushed (under Streams.mu)
	// lastKey is last, for the writers: an event with a lower key than it has
	// another queued behind it, so its flush can wait (deadlineWriter).
	lastKey atomic.Uint64
	ring    []uint64 // the keys of the last queue events pushed, oldest at ringAt once full
	ringAt  int
}

// groupKey names a topic set.
func groupKey(topics []string) string { return strings.Join(topics, "\x00") }

// remember records the key of an event pushed to the group.
func (g *group) remember(key uint64, queue int) {
	g.last = key
	g.lastKey.Store(key)
	if len(g.ring) < queue {
		g.ring = append(g.ring, key)
		return
	}
	g.ring[g.ringAt] = key
	g.ringAt = (g.ringAt + 1) % len(g.ring)
}

// behind returns the key that a connection's mark must have reached for one
// more event to be queued for it: 0 while the group has pushed fewer than queue.
func (g *group) behind(queue int) uint64 {
	if len(g.ring) < queue {
		return 0
	}
	return g.ring[g.ringAt]
}

func messageKey(seq uint64) uint64 { return seq << keyShift }

// heartbeatEvent is a heartbeat comment carrying its key.
func heartbeatEvent(key uint64) *sse.Event {
	return &sse.Event{Comment: []byte("hb " + strconv.FormatUint(key, 10))}
}

var (
	idPrefix        = []byte("id: ")
	heartbeatPrefix = []byte(": hb ")
)

// eventKey reads the key of an event from the first line the library writes
// of it: "id: <epoch>-<seq>\n" or ": hb <key>\n". 0 is an event without one.
func eventKey(line []byte) uint64 {
	line = bytes.TrimSuffix(line, []byte("\n"))
	switch {
	case bytes.HasPrefix(line, idPrefix):
		id := line[len(idPrefix):]
		i := bytes.LastIndexByte(id, '-')
		if i < 0 {
			return 0
		}
		seq, err := strconv.ParseUint(string(id[i+1:]), 10, 64)
		if err != nil {
			return 0
		}
		return messageKey(seq)
	case bytes.HasPrefix(line, heartbeatPrefix):
		k, err := strconv.ParseUint(string(line[len(heartbeatPrefix):]), 10, 64)
		if err != nil {
			return 0
		}
		return k
	}
	return 0
}

// formatEvent writes ev as the library does (sse v2.10.0 http.go ServeHTTP,
// SplitData off): for the events a connection gets of its own (hello, resyncs,
// stickies, goodbyes), which its writer writes ahead of the group's.
func formatEvent(b *bytes.Buffer, ev *sse.Event) {
	if len(ev.Data) > 0 {
		b.WriteString("id: ")
		b.Write(ev.ID)
		b.WriteByte('\n')
		if !bytes.HasPrefix(ev.Data, []byte(":")) {
			b.WriteString("data: ")
		}
		b.Write(ev.Data)
		b.WriteByte('\n')
		if len(ev.Event) > 0 {
			b.WriteString("event: ")
			b.Write(ev.Event)
			b.WriteByte('\n')
		}
	}
	if len(ev.Comment) > 0 {
		b.WriteString(": ")
		b.Write(ev.Comment)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}
