package cleanup

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)

func csrs(n int) []Candidate {
	out := make([]Candidate, n)
	states := []string{"pending", "approved", "issued", "denied", "failed"}
	for i := range out {
		out[i] = Candidate{
			Name: fmt.Sprintf("csr-%06d", n-i), UID: fmt.Sprintf("uid-%d", i),
			Created: now.Add(-time.Duration(i) * time.Hour),
			Labels:  map[string]string{"team": []string{"a", "b"}[i%2]},
			State:   states[i%len(states)], Signer: []string{"kubernetes.io/kube-apiserver-client", "example.com/x"}[i%2],
		}
	}
	return out
}

func names(s Selection) string {
	var b []string
	for _, c := range s.Items {
		b = append(b, c.Name)
	}
	return strings.Join(b, ",")
}

func mustSelector(t testing.TB, f Filter, text string) Filter {
	t.Helper()
	f, err := f.WithSelector(text)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSelect(t *testing.T) {
	all := csrs(10) // i: 0..9, age i hours, names csr-000010..csr-000001
	cases := []struct {
		name string
		f    Filter
		want string
	}{
		{"everything", Filter{}, "csr-000001,csr-000002,csr-000003,csr-000004,csr-000005,csr-000006,csr-000007,csr-000008,csr-000009,csr-000010"},
		{"decided older than 7h", Filter{State: Decided, OlderThan: 7 * time.Hour}, "csr-000001,csr-000002"}, // i=8 (denied), 9 (failed)
		{"state", Filter{State: "pending"}, "csr-000005,csr-000010"},
		{"signer", Filter{Signer: "example.com/x", State: Decided}, "csr-000001,csr-000003,csr-000007,csr-000009"},
		{"selector", mustSelector(t, Filter{OlderThan: 5 * time.Hour}, "team=a"), "csr-000002,csr-000004"},
		{"picked, one replaced", mustSelector(t, Filter{Picked: []Ref{{Name: "csr-000010", UID: "uid-0"}, {Name: "csr-000009", UID: "other"}}}, ""), "csr-000010"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := names(Select(all, c.f, now)); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	s := Select(all, Filter{Picked: []Ref{{Name: "csr-000009", UID: "other"}}}, now)
	if len(s.Gone) != 1 || s.Gone[0].Name != "csr-000009" {
		t.Errorf("a ticked row replaced since: gone %v", s.Gone)
	}
}

func TestBadSelectorIsRefusedInWords(t *testing.T) {
	for _, bad := range []string{"app in (a", "a==b==c", "!!x", "team=a b"} {
		_, err := Filter{}.WithSelector(bad)
		if err == nil || !strings.Contains(err.Error(), "is not a label selector") || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestFingerprintBindsUIDs(t *testing.T) {
	a := csrs(3)
	b := csrs(3)
	b[1].UID = "replaced"
	if Fingerprint("csrs", a) == Fingerprint("csrs", b) {
		t.Error("a replaced object must change the fingerprint")
	}
	if Fingerprint("csrs", a) != Fingerprint("csrs", csrs(3)) {
		t.Error("the same set must have the same fingerprint")
	}
	if Fingerprint("csrs", a[:2]) == Fingerprint("csrs", a) {
		t.Error("an added object must change the fingerprint")
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "7d": 7 * 24 * time.Hour, "90m": 90 * time.Minute, "30s": 30 * time.Second} {
		got, err := ParseAge(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
		if back, _ := ParseAge(FormatAge(got)); back != got {
			t.Errorf("%q does not round-trip", in)
		}
	}
	for _, bad := range []string{"7", "-1h", "xd", "1w"} {
		if _, err := ParseAge(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// BenchmarkSelectDecidedCSRs is the worst shape: 50,000 CSRs, 40,000 decided,
// "decided and older than 7 days" plus a label selector, and the fingerprint
// the preview puts in its form.
func BenchmarkSelectDecidedCSRs(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		all := csrs(n)
		f := mustSelector(b, Filter{State: Decided, OlderThan: 7 * 24 * time.Hour}, "team in (a,b)")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var matched int
			for b.Loop() {
				s := Select(all, f, now)
				_ = Fingerprint("csrs", s.Items)
				matched = len(s.Items)
			}
			b.ReportMetric(float64(matched), "matched")
		})
	}
}
