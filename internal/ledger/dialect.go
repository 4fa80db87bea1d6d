package ledger

import (
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
)

// dialect is what differs between the backends in the SQL layer: the name,
// goose's dialect and how a statement spells its parameters.
type dialect struct {
	name  string
	goose goose.Dialect
	// dollar: PostgreSQL numbers its parameters ($1, $2…); SQLite takes ?.
	dollar bool
}

const (
	sqliteName   = "sqlite"
	postgresName = "postgres"
)

var (
	sqliteDialect   = dialect{name: sqliteName, goose: goose.DialectSQLite3}
	postgresDialect = dialect{name: postgresName, goose: goose.DialectPostgres, dollar: true}
)

// bind turns the ? of a statement written once for both backends into the
// dialect's parameters. The store's SQL has no ? in a literal.
func (d dialect) bind(query string) string {
	if !d.dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
