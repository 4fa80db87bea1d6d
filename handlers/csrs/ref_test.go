package csrs

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParseCSRUID(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", ""},
		{" 0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0 ", ""},
		{"", "missing"},
		{"csr-a", "not the UID"},
		{"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f", "not the UID"},    // one digit short
		{"0f1e2d3c+4b5a-6978-8796-a5b4c3d2e1f0", "not the UID"},   // wrong separator
		{"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg", "not the UID"},   // not hex
		{"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/x", "not the UID"}, // a bulk value is not a uid
	} {
		uid, err := ParseUID(tc.in)
		switch {
		case tc.err == "" && (err != nil || string(uid) != strings.TrimSpace(tc.in)):
			t.Errorf("ParseUID(%q) = %q, %v; want it back", tc.in, uid, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseUID(%q) = %q, %v; want an error saying %q", tc.in, uid, err, tc.err)
		}
	}
}

func TestBulkRefs(t *testing.T) {
	const u1, u2 = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "11111111-2222-4333-8444-555555555555"
	for _, tc := range []struct {
		name string
		form url.Values
		want []csrRef
		err  string
	}{
		{"names and names[], blanks and repeats dropped", url.Values{"names": {u1 + "/a", " ", u1 + "/a"}, "names[]": {u2 + "/b"}},
			[]csrRef{{Name: "a", UID: u1}, {Name: "b", UID: u2}}, ""},
		{"nothing", url.Values{}, nil, ""},
		{"a bare name (an old form) carries no UID", url.Values{"names": {"a"}}, nil, "does not say which request"},
		{"a UID without a name", url.Values{"names": {u1 + "/"}}, nil, "does not say which request"},
		{"not a UID", url.Values{"names": {"csr-b/a"}}, nil, "does not carry the UID"},
		{"one name as two requests", url.Values{"names": {u1 + "/a", u2 + "/a"}}, nil, "selected twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bulkRefs(tc.form)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("bulkRefs = %v, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("bulkRefs = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
