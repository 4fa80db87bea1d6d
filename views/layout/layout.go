// Package layout holds the page shells: Page for the console and Bare for
// pages shown before a session exists.
package layout

// HTMXConfig is read by htmx from <meta name="htmx-config">. It keeps htmx
// inside the strict CSP: no injected <style> (the indicator CSS is in
// app.css), no eval, no <script> execution from swapped content, requests to
// this origin only. historyCacheSize 0 keeps cluster data out of the browser's
// storage; with refreshOnHistoryMiss, Back reloads the page from the server.
const HTMXConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true,"historyCacheSize":0,"refreshOnHistoryMiss":true}`

func pageTitle(t string) string {
	if t == "" {
		return "clusterdesk"
	}
	return t + " · clusterdesk"
}
