package present

import (
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// TestWebhookReplayResultWordsTheChanges: the headline counts with their
// test IDs, a group's counts without its zeros, a request naming its
// webhook and why it was refused, the ledger link of a console kind's
// object and none of another's, and the notes of what the replay could
// not know.
func TestWebhookReplayResultWordsTheChanges(t *testing.T) {
	csi := replay.GroupKey{User: "alice", Resource: "csidrivers.storage.k8s.io", Operation: "CREATE"}
	cms := replay.GroupKey{User: "bob", Namespace: "prod", Resource: "configmaps", Operation: "UPDATE"}
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	s := replay.WebhookSummary{
		Counts:    replay.Counts{Replayed: 3, Skipped: map[string]int64{replay.SkipNoObject: 2}, OldUnknown: 1},
		Exempt:    4,
		NewlySent: 1, NoLongerSent: 0, NewlyFailing: 2,
		Draft:  replay.WebhookTally{Sent: 1, FailsIfUnreachable: 2, Refused: 1},
		Groups: []replay.WebhookGroup{{GroupKey: csi, NewlySent: 1, NewlyFailing: 1}, {GroupKey: cms, NewlyFailing: 1}},
		Changes: []replay.WebhookChange{
			{GroupKey: csi, Time: at, Name: "d1", Webhook: "a.example.com", What: replay.NewlySent + ", " + replay.NewlyFailing, Draft: "sent (Fail)", Deployed: "not sent"},
			{GroupKey: cms, Time: at, Name: "c1", Webhook: "b.example.com", What: replay.NewlyFailing, Draft: "refused", Deployed: "not sent", Why: "matchConditions: boom"},
		},
		ChangesLeftOut: 5,
	}
	r := WebhookReplayResult(s, "the last hour", "Compared with nothing.")
	got := map[string]string{}
	for _, c := range r.Counts {
		got[c.TestID] = c.Value
	}
	if got["replay-evaluated"] != "3" || got["replay-skipped"] != "2" || got["replay-newly-sent"] != "1" || got["replay-no-longer-sent"] != "0" || got["replay-newly-failing"] != "2" {
		t.Errorf("counts %v", got)
	}
	if len(r.Groups) != 2 || r.Groups[0].Summary != "1 newly sent, 1 newly failing if unreachable" || r.Groups[1].Summary != "1 newly failing if unreachable" || r.Groups[0].Namespace != "(cluster-scoped)" {
		t.Fatalf("groups %+v", r.Groups)
	}
	d1, c1 := r.Groups[0].Requests[0], r.Groups[1].Requests[0]
	if d1.Href != "/ledger/csidrivers/d1" || d1.Message != "webhook a.example.com" || d1.Time != "2026-12-06 10:00:00" {
		t.Errorf("csidriver request %+v", d1)
	}
	if c1.Href != "" || c1.Message != "webhook b.example.com: matchConditions: boom" {
		t.Errorf("configmap request %+v: no ledger link (the ledger keeps the console's kinds), the refusal said", c1)
	}
	notes := strings.Join(r.Notes, " | ")
	for _, want := range []string{"Namespace labels are today's", "matchPolicy Equivalent is approximated", "1 update or delete was evaluated without the object before it",
		"Draft: 1 sent, 2 would fail if unreachable, 1 refused before the call", "4 writes were of admission configuration itself"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if !strings.Contains(r.LeftOut, "5 more") || len(r.Skipped) != 1 || r.Skipped[0] != "2 "+replay.SkipNoObject {
		t.Errorf("left out %q, skipped %v", r.LeftOut, r.Skipped)
	}
}

// TestReplayNotesSayWhatTheObjectsValidationRefused: the writes the API
// server refused as invalid before any policy are counted among the skips,
// in the order the page lists them.
func TestReplayNotesSayWhatTheObjectsValidationRefused(t *testing.T) {
	var r model.ReplayResult
	replayNotes(&r, replay.Counts{Skipped: map[string]int64{replay.SkipInvalid: 2, replay.SkipNotAdmitted: 1}}, "known", 0)
	if strings.Join(r.Skipped, "; ") != "1 "+replay.SkipNotAdmitted+"; 2 "+replay.SkipInvalid {
		t.Errorf("skipped %q", r.Skipped)
	}
}
