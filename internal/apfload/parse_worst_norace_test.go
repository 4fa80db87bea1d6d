//go:build !race

// Parses of the worst scrape shapes, on one goroutine: scripts/go-test-unit.sh
// runs them without the race detector, which only slowed them (6 s of the
// package's 11 on an idle machine, five times that on CI's loaded cores).

package apfload

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// Summing the latency buckets as they are read gives what expfmt's parse of
// the buffered lines gives, on the real capture, the worst shapes, and lines
// of unusual shape (which the summing leaves to expfmt): same totals, same errors.
func TestBucketSumsAgreeWithExpfmt(t *testing.T) {
	b := `apiserver_admission_webhook_admission_duration_seconds_bucket`
	cases := map[string]string{
		"devcluster capture":  string(readFixture(t)),
		"worst webhook shape": string(worstWebhookShape(t)),
		"worst APF shape":     string(worstShape(t)),
		"escaped label value": bucketText + b + `{name="a\"b",type="validating",le="0.5"} 3` + "\n" + b + `{name="a\"b",type="validating",le="+Inf"} 4` + "\n",
		"float counts":        bucketText + b + `{name="w",type="admit",le="0.5"} 2.5` + "\n" + b + `{name="w",type="admit",le="+Inf"} 1e1` + "\n",
		"timestamp":           bucketText + b + `{name="w",type="admit",le="0.5"} 2 1700000000000` + "\n",
		"trailing comma":      bucketText + b + `{name="w",type="admit",le="0.5",} 2` + "\n",
		"mixed with expfmt":   bucketText + b + `{name="w",type="admit",le="0.5"} 2` + "\n" + b + `{name="w",type="admit",le="0.5"} 0x1p1` + "\n",
		"no TYPE line":        b + `{name="w",type="admit",le="0.5"} 2` + "\n",
		"no name":             bucketText + b + `{type="admit",le="0.5"} 2` + "\n",
		"negative count":      bucketText + b + `{name="w",type="admit",le="0.5"} -2` + "\n",
		"no le":               bucketText + b + `{name="w",type="admit"} 2` + "\n",
		"bad le":              bucketText + b + `{name="w",type="admit",le="x"} 2` + "\n",
		"repeated label":      bucketText + b + `{name="w",name="v",type="admit",le="0.5"} 2` + "\n",
		"unterminated":        bucketText + b + `{name="w",type="admit",le="0.5" 2` + "\n",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			old, oldErr := parse(strings.NewReader(body), DefaultLimits, false)
			got, err := parse(strings.NewReader(body), DefaultLimits, true)
			if (err == nil) != (oldErr == nil) {
				t.Fatalf("error %v, expfmt alone: %v", err, oldErr)
			}
			old.KeptBytes, got.KeptBytes = 0, 0
			if !reflect.DeepEqual(old, got) {
				for k, w := range old.Webhooks {
					if g := got.Webhooks[k]; !reflect.DeepEqual(w, g) {
						t.Errorf("%v: %+v, expfmt alone %+v", k, g, w)
						break
					}
				}
				t.Fatalf("totals differ (%d webhooks, expfmt alone %d)", len(got.Webhooks), len(old.Webhooks))
			}
		})
	}
}

func TestParseWorstWebhookShape(t *testing.T) {
	got, err := Parse(bytes.NewReader(worstWebhookShape(t)), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Webhooks) < 500 {
		t.Errorf("webhooks %d, want ≥ 500", len(got.Webhooks))
	}
	if got.KeptBytes > int64(DefaultLimits.MaxKeptBytes) {
		t.Errorf("kept %d bytes, over the limit %d", got.KeptBytes, DefaultLimits.MaxKeptBytes)
	}
}
