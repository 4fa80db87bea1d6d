package cleanup

import "testing"

func TestRefValueRoundTrips(t *testing.T) {
	for _, r := range []Ref{{UID: "u1", Name: "a"}, {UID: "u2", Namespace: "ns", Name: "b.example.com"}} {
		got, err := ParseRef(r.Value())
		if err != nil || got != r {
			t.Errorf("%+v → %q → %+v, %v", r, r.Value(), got, err)
		}
	}
}

func TestParseRefRefusesWhatNamesNoObject(t *testing.T) {
	for _, v := range []string{"", "a", "/a", "u/", "u//a", "u/ns/", "u/a/b/c", "//"} {
		if r, err := ParseRef(v); err == nil {
			t.Errorf("%q parsed as %+v", v, r)
		}
	}
}
