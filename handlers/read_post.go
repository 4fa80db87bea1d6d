package handlers

import (
	"github.com/clusterdesk/clusterdesk/handlers/insight"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// readPOSTRoutes are the POST routes that change nothing in the cluster: they
// take a POST only because what they are given is too large for a URL (the
// interception simulator's objects, the replay's draft). They are outside the read-only group, so
// they work in --read-only mode; the CSRF guard still applies, as to every
// POST. Every other POST route is in the mutating group
// (TestEveryModeRefusesWritesInReadOnly).
var readPOSTRoutes = map[string]bool{
	urls.Intercept:         true,
	urls.PolicyReplayRoute: true,
	// The webhook configurations' replay (handlers/replay).
	urls.ValidatingWebhookReplayRoute: true,
	urls.MutatingWebhookReplayRoute:   true,
	// Cancelling a replay stops the console's own work, nothing in the cluster.
	urls.PolicyReplayCancelRoute: true,
	// The YAML editor's replay of its text (handlers/editor, replay.go).
	urls.PolicyEditorReplayRoute:            true,
	urls.BindingEditorReplayRoute:           true,
	urls.ValidatingWebhookEditorReplayRoute: true,
	urls.MutatingWebhookEditorReplayRoute:   true,
	// The APF what-if: a run, the priority level page's backtest and a
	// cancel (handlers/whatif).
	urls.WhatIf:            true,
	urls.WhatIfBacktest:    true,
	urls.WhatIfCancelRoute: true,
}

// readPOST marks, in the route table, a POST route that changes nothing; it
// must be one of readPOSTRoutes (read concurrently, never written).
func readPOST(path string) string {
	if !readPOSTRoutes[path] {
		panic("handlers: " + path + " is not in readPOSTRoutes")
	}
	return path
}

// simulatorTooLarge is the simulator's answer to a body over maxBody
// (handlers/insight), which explainBodyLimit gives its routes.
var simulatorTooLarge = insight.SimulatorTooLarge
