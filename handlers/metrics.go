package handlers

import (
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/clusterdesk/clusterdesk/internal/metrics"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// observeRequests counts every request and times it by route template
// (c.Path(): "/:kind/:name", never the raw path, so the number of series is
// bounded by the route table). The event stream's duration is its connection's
// life and stays out of the latency histogram. Errors are handed to the error
// handler here, so the status counted is the one sent. A path that is not one
// of e's route templates (should echo ever hand one over) is counted as
// unmatched; the method and code are bounded by ObserveHTTP.
func observeRequests(reg *metrics.Registry, e *echo.Echo) echo.MiddlewareFunc {
	// The route table is complete by the first request, not when this runs.
	routes := sync.OnceValue(func() map[string]bool {
		m := map[string]bool{}
		for _, r := range e.Routes() {
			m[r.Path] = true
		}
		return m
	})
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogRoutePath: true, LogStatus: true, LogLatency: true, HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			route := v.RoutePath
			if !routes()[route] {
				route = metrics.UnmatchedRoute
			}
			reg.ObserveHTTP(v.Method, route, v.Status, v.Latency, route == urls.Events)
			return nil
		},
	})
}
