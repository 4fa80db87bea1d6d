package apfsim

import (
	"crypto/sha256"
	"encoding/binary"
)

// completion is when an executing request gives its seats back.
type completion struct {
	at int64
	r  *request
}

// completions is a min-heap by time (a hand-written binary heap: the
// simulation pushes and pops one per dispatched request).
type completions struct{ h []completion }

func (c *completions) peek() (completion, bool) {
	if len(c.h) == 0 {
		return completion{}, false
	}
	return c.h[0], true
}

func (c *completions) push(x completion) {
	c.h = append(c.h, x)
	i := len(c.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if c.h[p].at <= x.at {
			break
		}
		c.h[i] = c.h[p]
		i = p
	}
	c.h[i] = x
}

func (c *completions) pop() completion {
	top := c.h[0]
	n := len(c.h) - 1
	last := c.h[n]
	c.h[n] = completion{}
	c.h = c.h[:n]
	if n > 0 {
		i := 0
		for {
			l := 2*i + 1
			if l >= n {
				break
			}
			if r := l + 1; r < n && c.h[r].at < c.h[l].at {
				l = r
			}
			if last.at <= c.h[l].at {
				break
			}
			c.h[i] = c.h[l]
			i = l
		}
		c.h[i] = last
	}
	return top
}

// FlowHash is the API server's hash of a flow (hashFlowID,
// k8s.io/apiserver v0.37.2 pkg/util/flowcontrol/apf_controller.go): the
// FlowSchema's name and the flow distinguisher, which shuffle sharding
// deals queues from.
func FlowHash(flowSchema, distinguisher string) uint64 {
	h := sha256.New()
	h.Write([]byte(flowSchema))
	h.Write([]byte{0})
	h.Write([]byte(distinguisher))
	var sum [32]byte
	h.Sum(sum[:0])
	return binary.LittleEndian.Uint64(sum[:8])
}
