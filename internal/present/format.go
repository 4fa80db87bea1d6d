package present

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// age formats like kubectl ("5m", "3d4h") and gives the RFC3339 time for a tooltip
// and a sort key that orders oldest last when ascending (youngest first), as kubectl does.
func age(t metav1.Time, now time.Time) (text, title, sortKey string) {
	if t.IsZero() {
		return ageText(t, now), "", "~"
	}
	d := now.Sub(t.Time)
	return ageText(t, now), t.UTC().Format(time.RFC3339), fmt.Sprintf("%020d", int64(d))
}

// ageText is age's text alone.
func ageText(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func ageCell(t metav1.Time, now time.Time) (model.Cell, string) {
	text, title, key := age(t, now)
	return model.Cell{Text: text, Title: title}, key
}

func boolText(b *bool, unset string) string {
	if b == nil {
		return unset
	}
	return strconv.FormatBool(*b)
}

// padInt makes an integer sort as text.
func padInt(n int64) string { return fmt.Sprintf("%020d", n) }

func join(ss []string) string {
	if len(ss) == 0 {
		return "—"
	}
	return strings.Join(ss, ", ")
}

func conditionTone(status string, goodWhenTrue bool) model.Tone {
	switch status {
	case "True":
		if goodWhenTrue {
			return model.ToneOK
		}
		return model.ToneError
	case "False":
		if goodWhenTrue {
			return model.ToneError
		}
		return model.ToneOK
	default:
		return model.ToneUnknown
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
