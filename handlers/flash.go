package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// setFlash queues banners (a write's result and the API server's warnings) for
// the page the browser is redirected to.
func setFlash(c echo.Context, s *auth.Sessions, banners []model.Banner) error {
	return s.SetFlash(c.Response(), banners)
}

func takeFlash(c echo.Context, s *auth.Sessions) ([]model.Banner, bool) {
	var banners []model.Banner
	ok := s.TakeFlash(c.Response(), c.Request(), &banners)
	return banners, ok && len(banners) > 0
}
