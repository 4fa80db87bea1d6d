package model

// ReplayJob is a replay running in the background (handlers/replay): its
// progress bar, and what the page's script needs to follow it.
type ReplayJob struct {
	// URL is the job's page (its progress, then its result); CancelURL
	// its Cancel button's POST.
	URL, CancelURL string
	// LiveURL is the page's event stream with the job's topic (web/js/
	// live.js connects to it when the job's element appears); "" without
	// live updates (the page then offers to reload).
	LiveURL string
	// Value and Max are the <progress> element's: how far through the
	// window the replay is (seconds of the window's writes read).
	Value, Max int64
	// Words say the same: "12,000 writes read, up to 2026-12-06 10:00:00".
	Words string
	// Label names the work above the bar ("" for a replay's words): the
	// APF what-if shares the job's bar (handlers/whatif).
	Label string
	// Cancelling: a cancel was asked and the job has not yet ended.
	Cancelling bool
	CSRFToken  string
}
