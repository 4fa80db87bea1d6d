package ledgerview

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func TestParseFilterReadsEveryField(t *testing.T) {
	v := url.Values{"kind": {"csrs", "csrs", "crds"}, "action": {"approve", "deny"}, "user": {" alice "},
		"signer": {"example.com/x"}, "result": {"denied"}, "source": {"apiserver"}, "since": {"7d"},
		"until": {"2026-11-28T11:00"}, "after": {"c2V0"}}
	f, err := ParseFilter(v, now)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Kinds, []string{"csrs", "crds"}) || !slices.Equal(f.Actions, []string{"approve", "deny"}) ||
		f.User != "alice" || f.Signer != "example.com/x" || f.Result != "denied" || f.Source != "apiserver" || f.After != "c2V0" {
		t.Fatalf("filter %+v", f)
	}
	if !f.Since.Equal(now.Add(-7*24*time.Hour)) || !f.Until.Equal(time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("since %v until %v", f.Since, f.Until)
	}
	q := f.Query([]string{"csrs", "flowschemas"}, 20)
	if !slices.Equal(q.Kinds, []string{"csrs"}) || q.Limit != 20 || q.After != "c2V0" || q.User != "alice" {
		t.Fatalf("query %+v: kinds must be the ticked ones the viewer may list", q)
	}
	if got := f.Values(); got.Get("after") != "" || got.Get("since") != "7d" || len(got["kind"]) != 2 {
		t.Fatalf("values %v: the links carry the filter as typed, never the cursor", got)
	}
}

func TestQueryOfAViewerWhoMayListNothingSelectsNothing(t *testing.T) {
	q := Filter{}.Query(nil, 0)
	if q.Kinds == nil || len(q.Kinds) != 0 {
		t.Fatalf("kinds %#v: nil would mean every kind", q.Kinds)
	}
}

// TestParseFilterRefusesHostileInput: what a URL can carry that no auditor
// means is a clear refusal, never a query.
func TestParseFilterRefusesHostileInput(t *testing.T) {
	for name, v := range map[string]url.Values{
		"10,000-character user": {"user": {strings.Repeat("a", 10000)}},
		"long signer":           {"signer": {strings.Repeat("s", MaxText+1)}},
		"cursor with a space":   {"after": {"a b"}},
		"huge cursor":           {"after": {strings.Repeat("A", MaxCursor+1)}},
		"unknown action":        {"action": {"drop"}},
		"unknown result":        {"result": {"maybe"}},
		"unknown source":        {"source": {"kubectl"}},
		"year 1900":             {"since": {"1900-01-01"}},
		"year 1":                {"since": {"0001-01-01"}},
		"year 9999":             {"until": {"9999-12-31"}},
		"a million days":        {"since": {"1000000d"}},
		"overflowing duration":  {"since": {"99999999999999999999h"}},
		"neither":               {"since": {"yesterday"}},
		"since after until":     {"since": {"2026-11-02"}, "until": {"2026-11-01"}},
		"bad kind":              {"kind": {strings.Repeat("k", 64)}},
		"unknown housekeeping":  {"housekeeping": {"shwo"}},
		"housekeeping=hide":     {"housekeeping": {"hide"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseFilter(v, now)
			if !errors.Is(err, ErrBadFilter) {
				t.Fatalf("err %v, want ErrBadFilter", err)
			}
			if len(err.Error()) > 300 {
				t.Errorf("message of %d characters: it must quote the value clipped", len(err.Error()))
			}
		})
	}
}

func TestParseHistory(t *testing.T) {
	if uid, after, err := ParseHistory(url.Values{"uid": {"4f1c-9"}, "after": {"m3"}}); err != nil || uid != "4f1c-9" || after != "m3" {
		t.Fatalf("%q %q %v", uid, after, err)
	}
	for _, v := range []url.Values{{"uid": {strings.Repeat("u", 129)}}, {"uid": {"a\nb"}}, {"after": {"\x00"}}} {
		if _, _, err := ParseHistory(v); !errors.Is(err, ErrBadFilter) {
			t.Errorf("%v: err %v", v, err)
		}
	}
}

func TestFilterOffersTheContractsActions(t *testing.T) {
	for _, a := range []string{ledger.ActionCreate, ledger.ActionIssue, ledger.ActionStatus} {
		if !slices.Contains(Actions, a) {
			t.Errorf("%s is not offered", a)
		}
	}
}

// The control plane's housekeeping is folded by default, shown on
// housekeeping=show, and never folded from a user's or a signer's page.
func TestHousekeepingIsFoldedByDefault(t *testing.T) {
	for name, c := range map[string]struct {
		v    url.Values
		fold bool
	}{
		"the first page":         {url.Values{}, true},
		"a kind and an action":   {url.Values{"kind": {"crds"}, "action": {"status"}}, true},
		"housekeeping=show":      {url.Values{"housekeeping": {"show"}}, false},
		"the API server's page":  {url.Values{"user": {"system:apiserver"}}, false},
		"a person's page":        {url.Values{"user": {"alice"}}, false},
		"a signer's decisions":   {url.Values{"signer": {"example.com/x"}}, false},
		"show with other fields": {url.Values{"housekeeping": {" show "}, "source": {"apiserver"}}, false},
		"the API server's audit": {url.Values{"source": {"apiserver"}}, true},
		"the console's writes":   {url.Values{"source": {"console"}}, false},
		"the observed versions":  {url.Values{"source": {"watch"}}, false},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := ParseFilter(c.v, now)
			if err != nil {
				t.Fatal(err)
			}
			if q := f.Query([]string{"crds"}, 0); q.FoldHousekeeping != c.fold {
				t.Errorf("FoldHousekeeping %v, want %v", q.FoldHousekeeping, c.fold)
			}
			// The links (next page, exports) keep the choice.
			if show := f.Values().Get("housekeeping") == "show"; show != f.ShowHousekeeping {
				t.Errorf("values %v lose housekeeping=show", f.Values())
			}
		})
	}
}
