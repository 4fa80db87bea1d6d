package handlers

import (
	"net/http"
	"time"
)

// ServerTimeouts are the connection limits of the console's http.Server.
// There is deliberately no WriteTimeout: event streams stay open for hours.
type ServerTimeouts struct {
	// ReadHeader bounds reading a request's line and headers (slow-loris headers).
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included: a client that
	// trickles a body is cut off. It does not end an event stream: once a
	// request's body is read (a GET has none), net/http clears the read
	// deadline before its background read for the client leaving
	// (connReader.startBackgroundRead), so the deadline cannot cancel the
	// stream's context; an HTTP/1.1 stream's connection is hijacked
	// (internal/live/hijack.go), which clears its deadlines.
	// TestEventStreamOutlivesReadTimeout holds it to that.
	Read time.Duration
	// Idle bounds a kept-alive connection waiting for its next request.
	Idle time.Duration
}

// DefaultServerTimeouts are the production limits. Read allows the largest
// body, an editor's 6 MiB, at about 1 Mbit/s.
var DefaultServerTimeouts = ServerTimeouts{ReadHeader: 10 * time.Second, Read: time.Minute, Idle: 2 * time.Minute}

// maxHeaderBytes bounds a request's line and headers together (net/http's
// default is 1 MiB). The console's own requests carry a session cookie and a
// CSRF token; proxy mode adds a user and its groups.
const maxHeaderBytes = 64 << 10

// NewServer is the console's http.Server around h, used by main and by the
// tests that attack the connection limits.
func NewServer(h http.Handler, t ServerTimeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}
