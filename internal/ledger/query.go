package ledger

import (
	"strings"
)

// selection is the WHERE clause and ORDER BY of a Query, written once for both
// backends (? parameters, bound per dialect). Each Query shape meets an index
// that leads with its equality columns and ends in (time_ns, seq): the object
// index for Kind+Name, the user's, the signer's, or the time index; the other
// filters are applied on top of the rows it walks.
type selection struct {
	conds []string
	args  []any
	order string
	none  bool // Kinds is empty but not nil: the viewer may see no kind
	// indexedBy names SQLite's index when its planner would pick worse.
	indexedBy string
	// list is the selected columns: selectList, or onePerVersionList.
	list string
}

func (s *selection) add(cond string, args ...any) {
	s.conds = append(s.conds, cond)
	s.args = append(s.args, args...)
}

// in adds "column IN (?, …)".
func (s *selection) in(column string, values []string) {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(values)), ", ")
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	s.add(column+" IN ("+marks+")", args...)
}

// selectFor builds the selection of q for dialect d, continuing after c when
// not nil.
func selectFor(d dialect, q Query, c *cursor) selection {
	s := selection{list: selectList}
	if d.name == sqliteName && q.User != "" && len(q.Actions) == 1 {
		// SQLite (3.49) takes the user's time index over the user's action
		// index when it fetches whole rows: a rare action then reads every
		// entry of the user in the window (170 ms at 1,000,000 entries).
		s.indexedBy = " INDEXED BY ledger_entries_user_action"
	}
	if q.Kinds != nil && len(q.Kinds) == 0 {
		s.none = true
	}
	if q.Kind != "" {
		s.add("kind = ?", q.Kind)
	}
	if q.Name != "" {
		s.add("name = ?", queryKey(q.Name))
	}
	if q.UID != "" {
		s.add("uid = ?", textOf(q.UID))
	}
	if q.User != "" {
		s.add("user_name = ?", queryKey(q.User))
	}
	if q.Signer != "" {
		s.add("signer = ?", queryKey(q.Signer))
	}
	if q.Manager != "" {
		// Filters the rows an index walks: asked with source=watch, a
		// minority of entries (no index of its own).
		s.add("manager = ?", textOf(q.Manager))
	}
	switch len(q.Actions) {
	case 0:
	case 1:
		// With a user, the user's action index walks only the page's rows.
		s.add("action = ?", q.Actions[0])
	default:
		// Several actions filter the rows of the time-ordered index; as an
		// index column they would be one walk per action and a sort.
		s.in("action || ''", q.Actions)
	}
	if q.Result != "" {
		s.add("result = ?", q.Result)
	}
	if q.Source != "" {
		s.add("source = ?", q.Source)
	}
	if len(q.Kinds) > 0 {
		// kind || '': the viewer's kinds filter the rows an index walks but
		// must not choose the index (SQLite would walk the object index for
		// every row of those kinds and sort them, a cost in proportion to
		// the ledger, not the page).
		s.in("kind || ''", q.Kinds)
	}
	if q.FoldHousekeeping {
		// The literal text of the partial index ledger_entries_people
		// (migration 00004): the planners use that index only for a WHERE
		// that holds its predicate as written, and then walk only the
		// entries that are not housekeeping, so a ledger that is mostly
		// housekeeping still costs one page per page.
		s.add("NOT (" + HousekeepingSQL + ")")
	}
	if q.OnePerVersion {
		s.add("NOT " + supersededSQL)
		s.list = onePerVersionList
	}
	if !q.Since.IsZero() {
		s.add("time_ns >= ?", q.Since.UnixNano())
	}
	if !q.Until.IsZero() {
		s.add("time_ns < ?", q.Until.UnixNano())
	}
	if c != nil {
		// The row-value comparison (time_ns, seq) < (t, s), spelled so that
		// every planner keeps its index range on time_ns and only the rows of
		// the cursor's own instant are filtered by seq.
		if q.Oldest {
			s.add("time_ns >= ? AND (time_ns > ? OR seq > ?)", c.timeNS, c.timeNS, c.seq)
		} else {
			s.add("time_ns <= ? AND (time_ns < ? OR seq < ?)", c.timeNS, c.timeNS, c.seq)
		}
	}
	if q.Oldest {
		s.order = " ORDER BY time_ns ASC, seq ASC"
	} else {
		s.order = " ORDER BY time_ns DESC, seq DESC"
	}
	return s
}

// sql is the statement selecting the entries, limit rows when limit > 0.
func (s selection) sql(limit int) (string, []any) {
	var b strings.Builder
	b.WriteString("SELECT " + s.list + " FROM ledger_entries" + s.indexedBy)
	if len(s.conds) > 0 {
		b.WriteString(" WHERE " + strings.Join(s.conds, " AND "))
	}
	b.WriteString(s.order)
	args := s.args
	if limit > 0 {
		b.WriteString(" LIMIT ?")
		args = append(args[:len(args):len(args)], limit)
	}
	return b.String(), args
}
