package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
)

// seqAnnotation is the annotation the driver patches: its value is the write's
// sequence number (drive).
const seqAnnotation = "bench.clusterdesk.io/seq"

// rowsEvent is the event (and topic) of the CSR rows a /csrs tab receives.
const rowsEvent = "csrs-rows"

// published is one CSR rows message the hub published: its stream sequence
// (the number in its event id) and, for each bench CSR row it carries, the
// driver's write sequence the console's cache held just before the batch was
// rendered. A write is delivered with the first message whose row carries its
// sequence or a later one: the hub coalesces changes to one object within an
// interval into one message (internal/live/doc.go), nothing else.
type published struct {
	Seq  uint64           `json:"seq"`
	Rows map[string]int64 `json:"rows"`
}

// publishLog sits between the hub and Streams in the serving child and records
// every CSR rows message, so the parent can tell what each tab should have
// received (every published message, each exactly once) from what it did.
// The hub renders and publishes on one goroutine, kind after kind.
type publishLog struct {
	cache   *kube.Cache
	streams *live.Streams

	rendered map[string]int64 // read before the last csrs render (hub goroutine only)

	mu        sync.Mutex
	msgs      []published
	ambiguous int // publishes whose ids could not be told (another publisher in between)
}

func newPublishLog(cache *kube.Cache, streams *live.Streams) *publishLog {
	return &publishLog{cache: cache, streams: streams}
}

// render wraps the hub's renderer: before rendering the CSRs it reads each
// changed bench CSR's write sequence from the cache. Read before, not after:
// a write that lands during the render is then credited to the next message of
// its row (which the hub will publish, the write having notified it), never to
// one that may not show it.
func (p *publishLog) render(r live.Renderer) live.Renderer {
	return func(kind kube.KindID, names []string, status bool) []live.Message {
		if kind == kube.CSRs {
			p.rendered = map[string]int64{}
			for _, n := range names {
				if !strings.HasPrefix(n, "bench-") {
					continue
				}
				csr, err := p.cache.CSR(n)
				if err != nil {
					continue
				}
				if s, err := strconv.ParseInt(csr.Annotations[seqAnnotation], 10, 64); err == nil {
					p.rendered[n] = s
				}
			}
		}
		return r(kind, names, status)
	}
}

// Publish passes msgs on and records the CSR rows messages with the ids
// Streams gave them: consecutive sequence numbers from the cursor before.
// Behind is the streams': the hub holds a batch while they are behind
// (live.HubOptions.MaxHold), as it does in the console.
func (p *publishLog) Behind() (behind, of int) { return p.streams.Behind() }

func (p *publishLog) Publish(msgs ...live.Message) {
	before, _ := cursorSeq(p.streams.Cursor())
	p.streams.Publish(msgs...)
	after, _ := cursorSeq(p.streams.Cursor())
	p.mu.Lock()
	defer p.mu.Unlock()
	if after-before != uint64(len(msgs)) {
		p.ambiguous++
		return
	}
	for i, m := range msgs {
		if m.Event != rowsEvent || m.Topic != rowsEvent {
			continue
		}
		rows := map[string]int64{}
		for _, name := range rowNames(m.Data) {
			if s, ok := p.rendered[name]; ok {
				rows[name] = s
			}
		}
		if len(rows) > 0 {
			p.msgs = append(p.msgs, published{Seq: before + uint64(i) + 1, Rows: rows})
		}
	}
}

// publishedLog is what the child's /published answers.
type publishedLog struct {
	Messages  []published `json:"messages"`
	Ambiguous int         `json:"ambiguous"`
}

func (p *publishLog) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	out := publishedLog{Messages: append([]published(nil), p.msgs...), Ambiguous: p.ambiguous}
	p.mu.Unlock()
	_ = json.NewEncoder(w).Encode(out)
}

// rowNames lists the CSR row ids an event's data carries.
func rowNames(data []byte) []string {
	var names []string
	for {
		i := bytes.Index(data, rowPrefix)
		if i < 0 {
			return names
		}
		data = data[i+len(rowPrefix):]
		end := bytes.IndexByte(data, '"')
		if end < 0 {
			return names
		}
		names = append(names, string(data[:end]))
		data = data[end:]
	}
}

// cursorSeq reads the sequence number of a stream cursor ("<epoch>-<seq>").
func cursorSeq(id string) (uint64, bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(id[i+1:], 10, 64)
	return n, err == nil
}

// cursorSeqBytes is cursorSeq of a cursor in bytes (the conversion of a
// short, non-escaping slice is made on the stack: no allocation per event).
func cursorSeqBytes(id []byte) (uint64, bool) {
	i := bytes.LastIndexByte(id, '-')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(id[i+1:]), 10, 64)
	return n, err == nil
}
