package csrs

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/decide"
)

// csrRef names one CSR as the person saw it (decide.Ref).
type csrRef = decide.Ref

// MaxReasonLen bounds the free text an approver writes into the condition message.
const MaxReasonLen = 1024

// ParseReason reads the approver's own text of a decision, trimmed, and
// refuses one longer than the condition keeps (400).
func ParseReason(v string) (string, error) {
	text := strings.TrimSpace(v)
	if len(text) > MaxReasonLen {
		return "", echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("The message is %d characters long; at most %d are kept in the condition.", len(text), MaxReasonLen))
	}
	return text, nil
}

// ParseUID reads the uid field of a single decision. The API server makes
// UIDs as UUIDs, so anything else did not come from a page of ours.
func ParseUID(v string) (types.UID, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", fmt.Errorf("The decision does not say which request it is for (the form field uid is missing); reload the request and decide again.")
	}
	if !isUUID(v) {
		return "", fmt.Errorf("The form field uid (%.40q) is not the UID of a request; reload the request and decide again.", v)
	}
	return types.UID(v), nil
}

// parseCSRRef reads one bulk selection, "<uid>/<name>" (model.CSRRow.SelectValue).
func parseCSRRef(v string) (csrRef, error) {
	uid, name, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok || name == "" {
		return csrRef{}, fmt.Errorf("The selection %.80q does not say which request it is for (a UID and a name); reload the queue and select again.", v)
	}
	u, err := ParseUID(uid)
	if err != nil {
		return csrRef{}, fmt.Errorf("The selection %.80q does not carry the UID of a request; reload the queue and select again.", v)
	}
	return csrRef{Name: name, UID: u}, nil
}

// bulkRefs reads the selected CSRs (names, or names[] as some clients send
// them), each "<uid>/<name>", without blanks and duplicates, in the order
// given. One name selected with two UIDs contradicts itself and is refused.
func bulkRefs(form url.Values) ([]csrRef, error) {
	return parseRefs(append(form["names"], form["names[]"]...))
}

// parseRefs reads selections, each "<uid>/<name>", as bulkRefs does.
func parseRefs(values []string) ([]csrRef, error) {
	var out []csrRef
	seen := map[string]types.UID{}
	for _, v := range values {
		if strings.TrimSpace(v) == "" {
			continue
		}
		ref, err := parseCSRRef(v)
		if err != nil {
			return nil, err
		}
		if uid, dup := seen[ref.Name]; dup {
			if uid != ref.UID {
				return nil, fmt.Errorf("%s is selected twice, as two different requests; reload the queue and select again.", ref.Name)
			}
			continue
		}
		seen[ref.Name] = ref.UID
		out = append(out, ref)
	}
	return out, nil
}

// isUUID reports whether s is a UUID in its canonical text form
// (8-4-4-4-12 hexadecimal digits), as the API server writes metadata.uid.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// ReplacedText is what a person is told when the request they decided on
// was deleted and created again under its name before the decision arrived.
const ReplacedText = "This request was replaced since you reviewed it; review the new one."
