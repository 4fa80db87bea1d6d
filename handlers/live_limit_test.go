package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

// One user gets live updates in at most live.DefaultMaxPerUser tabs, however
// many sign-ins they hold: the next tab's stream, of another sign-in, answers
// 200 with an event whose banner tells the user to close other tabs (an error
// status would make EventSource give up silently). (Local mode: every
// sign-in is the same user. Other users, and the other modes, are in
// live_caps_integration_test.go.)
func TestEventsPerUserAreLimited(t *testing.T) {
	ls := newStreamServer(t, allowKinds{"certificatesigningrequests": true})
	first, second := ls.session(t), ls.session(t)
	hello := func(resp *http.Response) sseclient.Event {
		t.Helper()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		ev, err := sseclient.NewReader(resp.Body).Next()
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	for i := range live.DefaultMaxPerUser {
		if ev := hello(ls.get(t, "/events?kinds=csrs", nil, first)); ev.Event != live.HelloEvent {
			t.Fatalf("tab %d: first event %+v, want hello", i+1, ev)
		}
	}
	ev := hello(ls.get(t, "/events?kinds=csrs", nil, second))
	if ev.Event != tooManyStreamsEvent {
		t.Fatalf("tab %d: first event %+v, want %s", live.DefaultMaxPerUser+1, ev, tooManyStreamsEvent)
	}
	d := doc(t, []byte(ev.Data))
	banner := d.Find(`#live-status [data-testid="banner-too-many-streams"]`)
	if banner.Length() != 1 || !strings.Contains(banner.Text(), "Close the tabs") {
		t.Errorf("the refusal does not fill the status slot with the banner: %q", ev.Data)
	}
}
