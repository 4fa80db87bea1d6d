package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// readPOSTRoutes are the POST routes that change nothing in the cluster: they
// take a POST only because what they are given is too large for a URL (the
// interception simulator's objects). They are outside the read-only group, so
// they work in --read-only mode; the CSRF guard still applies, as to every
// POST. Every other POST route is in the mutating group
// (TestEveryModeRefusesWritesInReadOnly).
var readPOSTRoutes = map[string]bool{
	urls.Intercept: true,
}

// readPOST marks, in the route table, a POST route that changes nothing; it
// must be one of readPOSTRoutes (read concurrently, never written).
func readPOST(path string) string {
	if !readPOSTRoutes[path] {
		panic("handlers: " + path + " is not in readPOSTRoutes")
	}
	return path
}

// simulatorTooLarge is the answer to a simulator request over maxBody: the
// editor's message speaks of applying objects, which the simulator does not.
func simulatorTooLarge() error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
		"The objects you sent are larger than "+maxBody+" together, the most the simulator accepts in one request, so nothing was evaluated. "+
			"Go back to keep your text, and leave out what the matchConditions and validations do not read (managedFields, large data or status).")
}
