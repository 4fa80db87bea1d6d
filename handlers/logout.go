package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// UserForgetter drops what the console keeps for an identity (kube.Users: its
// clients, which in token mode hold the bearer token).
type UserForgetter interface {
	Forget(id kube.Identity)
}

// logout ends the session everywhere, not only in this browser: its id is
// revoked (a saved copy of the cookie gets 401), in token mode the token is
// forgotten with the clients built on it, and the session's open event
// streams (other tabs) are told session-expired and closed.
func (h *Handlers) logout(c echo.Context) error {
	id, _ := kube.IdentityFrom(c.Request().Context())
	sess, err := h.gate.SignOut(c.Response(), c.Request())
	if h.deps.Users != nil {
		h.deps.Users.Forget(id)
	}
	if lv := h.deps.Live; lv != nil && sess.ID != "" {
		lv.streams.End(streamOwner(sess), sessionEndedMessage("Signed out", signedOutStreamText(h.gate.Mode)))
	}
	if err != nil {
		// The cookie is cleared, but a copy of it may still work: say so.
		h.deps.Log.Error("sign-out: revocation failed", "err", err)
		return echo.NewHTTPError(http.StatusServiceUnavailable, "clusterdesk cleared this browser's session but could not revoke it everywhere. Try signing out again.")
	}
	p := model.LoginPage{Title: "Signed out", Mode: string(h.gate.Mode)}
	switch h.gate.Mode {
	case auth.ModeToken:
		p.CSRFToken = h.preSessionToken(c)
		p.Message = "clusterdesk has forgotten your token. To sign in again, paste a token."
	case auth.ModeProxy:
		p.Message = "clusterdesk keeps no session in proxy mode: sign out at your organisation's proxy."
	case auth.ModeOIDC:
		p.Provider = h.issuerHost()
		p.Message = "clusterdesk has forgotten your ID and refresh tokens."
	default:
		p.Message = "To sign in again, open the newest one-time login URL that clusterdesk printed in its terminal."
	}
	return render(c, http.StatusOK, pages.Login(p))
}

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
// stream's periodic check): it catches what endStreamsOfRemoteSignOuts
// cannot name, a sign-out of all of a user's sessions.
func (h *Handlers) revoked(sess auth.Session) bool {
	if sess.ID == "" || h.gate.Sessions == nil || h.gate.Sessions.Revocations == nil {
		return false
	}
	return h.gate.Sessions.Revocations.Revoked(sess)
}

// endStreamsOfRemoteSignOuts ends, at once, the event streams this replica
// holds for a session signed out on any replica: with a shared revoker the
// sign-out reaches every replica through its watch (auth.SharedRevoker).
func (h *Handlers) endStreamsOfRemoteSignOuts() {
	if h.gate.Sessions == nil || h.deps.Live == nil {
		return
	}
	shared, ok := h.gate.Sessions.Revocations.(*auth.SharedRevoker)
	if !ok {
		return
	}
	streams, mode := h.deps.Live.streams, h.gate.Mode
	shared.OnRevoke(func(name string) {
		streams.End(sessionStreamOwner(name), sessionEndedMessage("Signed out", signedOutStreamText(mode)))
	})
}
