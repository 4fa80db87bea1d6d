package live

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Message is one update: an SSE event for the connections subscribed to Topic.
type Message struct {
	Topic string // who receives it; also the key of sticky messages
	Event string // the SSE event name; "" means the browser's default "message"
	Data  []byte // the payload (HTML fragments in this console); must not be empty
	// Sticky messages are the current state of their topic (a count, a banner): the
	// latest one per (Topic, Event) is sent to every new subscriber on connect.
	Sticky bool
}

// ResyncEvent names the event that tells a page to fetch a topic afresh; its data
// is the topic.
const ResyncEvent = "resync"

// HelloEvent is the first event on every connection.
const HelloEvent = "hello"

// valid reports whether m can be sent as one well-formed SSE event.
func (m Message) valid() error {
	switch {
	case m.Topic == "":
		return fmt.Errorf("live: message without a topic")
	case strings.ContainsAny(m.Event, "\r\n:"):
		return fmt.Errorf("live: event name %q would break the stream", m.Event)
	case len(m.Data) == 0:
		// The library ends a connection on an event with neither data nor comment.
		return fmt.Errorf("live: message %s/%s without data", m.Topic, m.Event)
	}
	return nil
}

// normalizeNewlines turns CRLF and lone CR into LF. An SSE parser ends a line at
// any of the three while the library's SplitData splits on LF only, so a CR left in
// user text would let the rest of its line ("event: x") become a field of its own.
// The payloads are HTML, whose parser normalises newlines the same way, so the page
// gets the same DOM it would get from a full page load.
func normalizeNewlines(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

// encodeData returns data as the library writes it with SplitData off, in one
// piece: "data: " and the value, each further line behind "\ndata: ". Publish
// encodes an event once for every connection it goes to; SplitData would split
// and format it line by line for each of them. Newlines are normalised first
// (normalizeNewlines), so no line of it is read as another field. The library
// writes data that begins with ':' as it is (its comment form): such data
// begins with an empty comment line, and its first line follows as data.
func encodeData(b []byte) []byte {
	b = normalizeNewlines(b)
	lead := ""
	if len(b) > 0 && b[0] == ':' {
		lead = ":\ndata: "
	}
	n := bytes.Count(b, []byte("\n"))
	out := make([]byte, 0, len(lead)+len(b)+n*len("data: "))
	out = append(out, lead...)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b...)
		}
		out = append(out, b[:i+1]...)
		out = append(out, "data: "...)
		b = b[i+1:]
	}
}

// cursor formats a stream position as an event id.
func cursor(epoch string, seq uint64) string {
	return epoch + "-" + strconv.FormatUint(seq, 10)
}

// parseCursor reads a cursor of this process; ok is false for anything else
// (empty, malformed, or from before a restart).
func parseCursor(epoch, s string) (seq uint64, ok bool) {
	e, n, found := strings.Cut(s, "-")
	if !found || e != epoch {
		return 0, false
	}
	seq, err := strconv.ParseUint(n, 10, 64)
	return seq, err == nil
}

// Reply answers a request with a short, complete event stream holding msgs, for
// a request that gets no subscription (an expired session). Unlike an error
// status, which makes EventSource give up without telling the page, the page sees
// the events. retry asks the browser to wait before it reconnects, should the page
// not close the connection itself.
func Reply(w http.ResponseWriter, msgs ...Message) error {
	return ReplyStatus(w, http.StatusOK, msgs...)
}

// ReplyStatus is Reply with another status: a client that reads the stream
// sees the events, and one that checks the status (or a browser's
// EventSource, which then stops) sees the refusal.
func ReplyStatus(w http.ResponseWriter, status int, msgs ...Message) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(status)
	var b bytes.Buffer
	b.WriteString("retry: 60000\n\n")
	for _, m := range msgs {
		if err := m.valid(); err != nil {
			return err
		}
		if m.Event != "" {
			b.WriteString("event: " + m.Event + "\n")
		}
		for _, line := range bytes.Split(normalizeNewlines(m.Data), []byte("\n")) {
			b.WriteString("data: ")
			b.Write(line)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}
