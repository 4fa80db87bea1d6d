package live

import (
	"bytes"
	"time"

	"github.com/r3labs/sse/v2"
)

// endGrace is how long an ended connection has to write its last messages
// before it is cut off. The connection's handler writes it when the group's
// next event wakes it: cancelling at once could close the connection before
// the goodbye reaches the client.
const endGrace = time.Second

// End ends every connection of owner (a signed-out session, see
// Subscription.Owner): each leaves its topics at once, is sent msgs (e.g. the
// session-expired event, so the page stops reconnecting and says why), and is
// closed endGrace later. It returns how many connections it ended.
func (s *Streams) End(owner string, msgs ...Message) int {
	if owner == "" {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	woken := map[*group]bool{}
	for _, c := range s.conns {
		if c.sub.Owner != owner || c.done {
			continue
		}
		n++
		c.ended = true
		attached := c.attached
		s.leave(c) // no further message, nor heartbeat, reaches it
		if !attached {
			// Not subscribed yet, so nothing to say goodbye with; attach
			// will not attach an ended connection.
			c.cancel()
			continue
		}
		var b bytes.Buffer
		for _, m := range msgs {
			if err := m.valid(); err != nil {
				s.opts.Log.Error("live: dropping message", "err", err)
				continue
			}
			formatEvent(&b, &sse.Event{Event: []byte(m.Event), Data: encodeData(m.Data)})
		}
		if b.Len() > 0 {
			goodbye := b.Bytes()
			c.own.Store(&goodbye)
			// Its writer writes it ahead of the group's next event: a heartbeat
			// now (the other connections of the group get one early).
			if !woken[c.g] {
				woken[c.g] = true
				s.pushHeartbeat(c.g)
			}
		}
		time.AfterFunc(endGrace, c.cancel)
	}
	return n
}
