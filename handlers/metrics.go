package handlers

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/clusterdesk/clusterdesk/internal/metrics"
)

// observeRequests counts every request and times it by route template
// (c.Path(): "/:kind/:name", never the raw path, so the number of series is
// bounded by the route table). The event stream's duration is its connection's
// life and stays out of the latency histogram. Errors are handed to the error
// handler here, so the status counted is the one sent.
func observeRequests(reg *metrics.Registry) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogRoutePath: true, LogStatus: true, LogLatency: true, HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			reg.ObserveHTTP(v.Method, v.RoutePath, v.Status, v.Latency, v.RoutePath == livePath)
			return nil
		},
	})
}
