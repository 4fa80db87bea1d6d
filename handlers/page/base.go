package page

import (
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// ChromeFunc builds the layout model every page shares: the nav with counts
// (active marks the kind's entry), who the console acts as, read-only state,
// the CSRF token, the live-update settings and the flash banners. The
// handlers package provides it: the nav reads the kind registry and the
// sign-in, which no feature package owns.
type ChromeFunc func(c echo.Context, title string, active kube.KindID, crumbs ...model.Crumb) model.Chrome

// Base is what a feature's handlers share with every other page: the page
// chrome and the log. A feature embeds it next to its own ports.
type Base struct {
	Log    *slog.Logger
	Chrome ChromeFunc
	// MarkLive reads a detail page's live-update settings (the stream's
	// cursor, the object's version) before the page reads its object, so
	// the chrome built afterwards carries them (handlers/live's Chrome); nil
	// in tests that build no chrome.
	MarkLive func(c echo.Context, active kube.KindID)
}
