package metrics

import (
	"net/http"
	"strconv"
)

// OtherLabel is the label value of a method or status code outside the fixed
// sets: anything a client can choose freely must map onto a bounded set of
// values, or each new value would be a new time series kept for the life of
// the process (2,000 requests with made-up 20 KB methods once added ~67 MiB).
const OtherLabel = "other"

// methodLabel is method when it is one the console serves, else OtherLabel.
// Only exact upper-case names count: net/http passes the method through as sent.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return method
	}
	return OtherLabel
}

// codeLabel is code when it is a valid HTTP status (100–599, the range
// net/http lets a handler write), else OtherLabel.
func codeLabel(code int) string {
	if code < 100 || code > 599 {
		return OtherLabel
	}
	return strconv.Itoa(code)
}
