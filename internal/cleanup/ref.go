package cleanup

import (
	"fmt"
	"strings"
)

// Value is the ref as a tick box's value: "<uid>/<name>", or
// "<uid>/<namespace>/<name>" for a namespaced object. The UID makes the
// preview refuse an object deleted and created again under the same name;
// names and namespaces never hold a "/", so the parts cannot be confused.
func (r Ref) Value() string {
	if r.Namespace != "" {
		return r.UID + "/" + r.Namespace + "/" + r.Name
	}
	return r.UID + "/" + r.Name
}

// ParseRef reads a tick box's value (Ref.Value). An error says, in words,
// which value does not name an object.
func ParseRef(value string) (Ref, error) {
	parts := strings.Split(strings.TrimSpace(value), "/")
	for _, p := range parts {
		if p == "" {
			parts = nil
			break
		}
	}
	switch len(parts) {
	case 2:
		return Ref{UID: parts[0], Name: parts[1]}, nil
	case 3:
		return Ref{UID: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	}
	return Ref{}, fmt.Errorf("The ticked row %.80q does not say which object it is (uid/name or uid/namespace/name).", value)
}
