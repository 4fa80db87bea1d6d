// Package live relays cluster changes to browsers over server-sent events: one
// connection per browser tab, every change rendered once and fanned out.
//
// Two parts:
//
//   - Hub takes kube.Cache change notifications (which only enqueue), coalesces them
//     per object, and at most once per interval asks a Renderer for the messages of
//     each changed kind: the HTML fragments pages swap in, rendered once, not once
//     per client. While more than 1 in 20 connections have yet to take the last
//     message (Streams.Behind), a batch waits, up to HubOptions.MaxHold (250 ms),
//     and the changes meanwhile join it: under load the fan-outs stay as many as
//     the cores can write, instead of queueing behind one another.
//   - Streams serves the connections and publishes messages to the ones subscribed
//     to a message's topic. It is the only code that sees github.com/r3labs/sse/v2.
//
// r3labs/sse v2.10.0 (2023) is used knowing its faults:
//
//   - AutoReplay (on in sse.New) keeps every event forever: off.
//   - AutoStream lets clients create streams: off; the server names every stream.
//   - SplitData would split and format every event's data line by line for each
//     connection it goes to: it is off, and Publish encodes the data once
//     (encodeData: every line behind "data: ", carriage returns normalised to line
//     feeds first), so a line of user text such as "event: x" stays inside a data
//     field (a CR is a line break to an SSE parser). The library writes data that
//     begins with ':' as it is, its comment form: encodeData puts an empty
//     comment line before such data.
//   - It writes an event as a Fprintf per field and flushes it: the connection's
//     writer (deadlineWriter) gathers them into one write to net/http per flush,
//     or per several events where more are queued for the connection.
//   - Its ServeHTTP blocks for as long as the stream lasts: run by the
//     handler, that pins the handler's goroutine (the middleware chain on its
//     stack) and net/http's buffers. An HTTP/1.1 stream is hijacked instead
//     (hijack.go): the library runs in a goroutine of its own over the raw
//     connection, written as net/http writes a chunked response, and the
//     handler returns; Subscription.Done releases what the stream holds.
//     HTTP/2 cannot be hijacked and is served through the handler as before.
//   - Its stream goroutine sends to each subscriber with a blocking channel send
//     (64 slots each), so one stalled client would hold up every other
//     subscriber of the stream. The connections of one topic set share a stream
//     (a group, group.go: one goroutine and one channel hop per event for all of
//     them, not one per tab), and none is let near its 64 slots: every event
//     pushed to a group has a key (a message's from its sequence, a heartbeat's
//     in its comment), each connection's writer records the key it has reached,
//     and before a push a connection with Queue events still waiting is evicted.
//     Every write carries a deadline (http.ResponseController) so a write into a
//     stalled TCP connection fails instead of hanging. What a connection gets of
//     its own (hello, resyncs, stickies, a goodbye) its writer writes ahead of the
//     group's events; what the group pushed before the hello it skips.
//   - RemoveStream with a live subscriber leaks that subscriber's goroutine: a
//     group's stream is removed only after its last connection's ServeHTTP has
//     returned, which is when the library has deregistered its subscriber. Nothing
//     publishes an event with neither data nor comment, which would make ServeHTTP
//     return early.
//   - Last-Event-ID must be a number for the library (or it answers 400, which makes
//     EventSource give up): the header is taken out of the request it sees, and
//     Streams interprets it as a cursor itself.
//
// The route serving Streams must have no gzip or timeout middleware, and the HTTP
// server no WriteTimeout: a stream stays open for as long as the tab does. A
// comment is sent at least every 15 s so proxies and browsers keep it open.
//
// What a browser receives on one connection:
//
//	hello            first: the kinds granted to this connection, comma-separated
//	resync           data is a topic the page must fetch afresh (it may have missed changes)
//	<topic>          the latest message of each sticky topic on connect, then every new one
//	: hb <n>         heartbeat comment (n orders it among the events, for the server)
//
// Every event carries an id, the stream cursor ("<epoch>-<sequence>"). EventSource
// sends the last one back on reconnect as Last-Event-ID; a page sends the cursor it
// was rendered at as ?since=. A connection whose cursor is older than a resync
// topic's last message, or from another process (a restart), gets a resync event
// for that topic instead of a replay: history is never trusted.
//
// Replicas: each console process holds its own watches and its own Streams,
// whose epoch is unique (start time and random bits). Behind a balancer with no
// sticky sessions a tab's stream may reconnect to another replica, whose
// cursors its Last-Event-ID is not: that is the unknown-cursor case above, so
// the page fetches what it shows afresh (through the balancer) and then
// receives the new replica's changes; the sticky counts and status arrive on
// connect. A reconnect to the same replica replays as before. A detail page
// also names its object's resourceVersion (handlers: objectShownIsCached) and
// is not told to resync when the new replica's cache holds that very version.
package live
