package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// setFlash queues banners (a write's result and the API server's warnings) for
// the page the browser is redirected to, bound to the request's session (or
// proxy identity), so it shows in that session only.
func setFlash(c echo.Context, s *auth.Sessions, banners []model.Banner) error {
	binding, _ := c.Get(csrfBindingKey).(string)
	return s.SetFlash(c.Response(), binding, banners)
}

func takeFlash(c echo.Context, s *auth.Sessions) ([]model.Banner, bool) {
	var banners []model.Banner
	binding, _ := c.Get(csrfBindingKey).(string)
	ok := s.TakeFlash(c.Response(), c.Request(), binding, &banners)
	return banners, ok && len(banners) > 0
}
