package csrqueue

import (
	"net/url"
	"testing"
)

func TestParseQuery(t *testing.T) {
	v, _ := url.ParseQuery("q=+x+&state=bogus&age=forever&sort=nope&dir=desc&signer=s&requester=r")
	q := ParseQuery(v)
	if q != (Query{Filter: "x", Signer: "s", Requester: "r", Desc: true}) {
		t.Errorf("query = %+v", q)
	}
	back := ParseQuery(Query{Filter: "a b", State: Issued, Age: "gt7d", Sort: "age"}.Values())
	if back != (Query{Filter: "a b", State: Issued, Age: "gt7d", Sort: "age"}) {
		t.Errorf("round trip = %+v", back)
	}
}
