package ledger

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadCursor is returned by Query for a Query.After this store did not hand
// out (edited, cut, or from a query of the other order).
var ErrBadCursor = errors.New("ledger: malformed page cursor")

// cursor is the position after a page's last row: its (time, seq) key, and
// the order it was read in, so a cursor cannot continue the other order.
type cursor struct {
	oldest bool
	timeNS int64
	seq    int64
}

const cursorVersion = "1"

// encode spells the cursor as an opaque URL-safe string.
func (c cursor) encode() string {
	order := "n"
	if c.oldest {
		order = "o"
	}
	raw := cursorVersion + "." + order + "." + strconv.FormatInt(c.timeNS, 10) + "." + strconv.FormatInt(c.seq, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeCursor reads a cursor for a query of the given order.
func decodeCursor(s string, oldest bool) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, ErrBadCursor
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 4 || parts[0] != cursorVersion || (parts[1] != "n" && parts[1] != "o") {
		return cursor{}, ErrBadCursor
	}
	c := cursor{oldest: parts[1] == "o"}
	if c.oldest != oldest {
		return cursor{}, fmt.Errorf("%w: it continues the other order", ErrBadCursor)
	}
	if c.timeNS, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
		return cursor{}, ErrBadCursor
	}
	if c.seq, err = strconv.ParseInt(parts[3], 10, 64); err != nil || c.seq < 0 {
		return cursor{}, ErrBadCursor
	}
	return c, nil
}
