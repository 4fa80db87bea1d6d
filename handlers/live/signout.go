package live

import (
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
)

// signedOutStreamText is what a tab of a signed-out session shows.
func signedOutStreamText(mode auth.Mode) string {
	if mode == auth.ModeToken {
		return "You signed out of clusterdesk. Reload the page to sign in again with a token."
	}
	if mode == auth.ModeOIDC {
		return "You signed out of clusterdesk. Reload the page to sign in again."
	}
	return "You signed out of clusterdesk. Open the newest one-time login URL that clusterdesk printed in its terminal to sign in again."
}

// EndSessionStreams ends the event streams of sess, which signed out here
// (handlers/signin's logout): its other tabs are told so and closed.
func (h *Handlers) EndSessionStreams(sess auth.Session) {
	h.d.Updates.streams.End(streamOwner(sess), sessionEndedMessage("Signed out", signedOutStreamText(h.d.Gate.Mode)))
}

// streamOwner names the event streams of one session, so that logout finds
// them (live.Streams.End); the stream limit counts a user's streams, not a
// session's (events). Proxy mode has no session id: each stream is an owner
// of its own, as the proxy vouches for every reconnect.
func streamOwner(sess auth.Session) string {
	if sess.ID != "" {
		return sessionStreamOwner(auth.SessionRevocationName(sess.ID))
	}
	return sess.User + "\x00" + sess.IssuedAt.Format(time.RFC3339Nano)
}

// sessionStreamOwner names the streams of the session whose revocation is
// named revocation (auth.SessionRevocationName): a replica that learns of a
// sign-out from the cluster knows only that name.
func sessionStreamOwner(revocation string) string { return "session\x00" + revocation }

// revoked reports whether sess was signed out since its stream opened (the
// stream's periodic check): it catches what EndStreamsOfRemoteSignOuts
// cannot name, a sign-out of all of a user's sessions.
func (h *Handlers) revoked(sess auth.Session) bool {
	if sess.ID == "" || h.d.Gate.Sessions == nil || h.d.Gate.Sessions.Revocations == nil {
		return false
	}
	return h.d.Gate.Sessions.Revocations.Revoked(sess)
}

// EndStreamsOfRemoteSignOuts ends, at once, the event streams this replica
// holds for a session signed out on any replica: with a shared revoker the
// sign-out reaches every replica through its watch (auth.SharedRevoker).
func (h *Handlers) EndStreamsOfRemoteSignOuts() {
	if h.d.Gate.Sessions == nil || h.d.Updates == nil {
		return
	}
	shared, ok := h.d.Gate.Sessions.Revocations.(*auth.SharedRevoker)
	if !ok {
		return
	}
	streams, mode := h.d.Updates.streams, h.d.Gate.Mode
	shared.OnRevoke(func(name string) {
		streams.End(sessionStreamOwner(name), sessionEndedMessage("Signed out", signedOutStreamText(mode)))
	})
}
