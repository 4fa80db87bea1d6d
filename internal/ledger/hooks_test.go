package ledger

import "strings"

// QuerySQL is the statement a store runs for q (newest first, no cursor) on
// the backend dsn names, bound for its driver: the suite asks the planners
// how they run it.
func QuerySQL(dsn string, q Query) (string, []any) {
	d := postgresDialect
	if strings.HasPrefix(dsn, "sqlite:") {
		d = sqliteDialect
	}
	text, args := selectFor(d, q, nil).sql(DefaultLimit)
	return d.bind(text), args
}
