package live

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkDelivery is the cost of one event reaching one connection: a
// row-sized multi-line HTML message published to 50 loopback connections, in
// batches their queues hold, each client counting events as it reads them
// (the clients' cost is in it too, the same whatever the server does). It
// reports the time, bytes and allocations per delivery, for comparing
// changes to Streams' writing path (make bench measures the whole console).
func BenchmarkDelivery(b *testing.B) {
	const conns, batch = 50, 32
	streams := NewStreams(Options{Log: quietLog()})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		streams.Serve(w, r, Subscription{Topics: []string{"rows"}})
	}))
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() {
		cancel()
		streams.Close()
		srv.Close()
	})
	var got [conns]atomic.Int64
	for i := range conns {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 64<<10)
			for {
				line, err := r.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(line) == 1 { // the blank line that ends an event
					got[i].Add(1)
				}
			}
		}()
	}
	waitAll := func(n int64) {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Microsecond) {
			done := true
			for i := range got {
				if got[i].Load() < n {
					done = false
					break
				}
			}
			if done {
				return
			}
			if time.Now().After(deadline) {
				b.Fatalf("events did not arrive (evicted %d)", streams.Stats().Evicted)
			}
		}
	}
	waitAll(1) // hello: every connection is attached
	var row strings.Builder
	for i := range 24 {
		fmt.Fprintf(&row, "<tr id=\"row-csrs-%d\" hx-swap-oob=\"true\"><td class=\"name\">csr-%d</td><td>Pending</td></tr>\n", i, i)
	}
	msg := Message{Topic: "rows", Event: "csrs-rows", Data: []byte(row.String())}
	b.ReportAllocs()
	b.ResetTimer()
	want := int64(1)
	for sent := 0; sent < b.N; {
		k := min(batch, b.N-sent)
		for range k {
			streams.Publish(msg)
		}
		sent += k
		want += int64(k)
		waitAll(want)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*conns), "ns/delivery")
}
