package decide

import "fmt"

// InvalidError is a request the use case refuses before writing anything
// (too many requests, a contradictory group action). Its text is for the
// person: it says what to do.
type InvalidError struct{ msg string }

func (e *InvalidError) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{msg: fmt.Sprintf(format, args...)}
}
