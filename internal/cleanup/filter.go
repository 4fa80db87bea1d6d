package cleanup

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/labelselector"
)

// Decided is the State filter for every CSR that is no longer pending.
const Decided = "decided"

// Filter chooses the objects a cleanup deletes. The zero Filter matches every object.
type Filter struct {
	// Selector is the label selector in kubectl -l syntax ("" for none), and
	// selector its parsed form (WithSelector).
	Selector string
	selector labels.Selector
	// OlderThan keeps objects created more than this long before the cutoff time.
	OlderThan time.Duration
	// State is a CSR state key, Decided, or "" for any; Signer is a CSR's exact signerName.
	State, Signer string
	// Picked, when not nil, are the ticked rows: only they are candidates, and
	// only while they still have the UID the person saw.
	Picked []Ref
}

// Ref names one object as the person saw it.
type Ref struct{ Namespace, Name, UID string }

// WithSelector parses text as a label selector into f, with the console's
// one selector parser (internal/labelselector: the syntax of kubectl -l and
// of the API server's labelSelector parameter). A failure is a
// *labelselector.Error.
func (f Filter) WithSelector(text string) (Filter, error) {
	sel, text, err := labelselector.Parse(text)
	if err != nil {
		return f, err
	}
	f.Selector, f.selector = text, sel
	return f, nil
}

// ParseAge reads an age such as "7d", "36h", "90m" or "30s" ("" is none).
// Days are allowed because "older than 7 days" is how people say it.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100000 {
			return 0, fmt.Errorf("the age %q is not a number of days such as 7d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("the age %q is not a duration such as 7d, 12h, 30m or 45s", s)
	}
	return d, nil
}

// FormatAge writes an age as ParseAge reads it.
func FormatAge(d time.Duration) string {
	if d == 0 {
		return ""
	}
	if d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return d.String()
}
