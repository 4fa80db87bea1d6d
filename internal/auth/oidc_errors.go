package auth

import "errors"

// OIDCErrorKind says what went wrong in an OIDC sign-in or renewal; the
// handlers turn each into a page that says so.
type OIDCErrorKind string

// What can go wrong.
const (
	// OIDCIssuerUnreachable: discovery or the token endpoint did not answer.
	OIDCIssuerUnreachable OIDCErrorKind = "issuer-unreachable"
	// OIDCDenied: the person (or the provider) declined (error=access_denied).
	OIDCDenied OIDCErrorKind = "denied"
	// OIDCProviderError: the provider sent another error, or no code.
	OIDCProviderError OIDCErrorKind = "provider-error"
	// OIDCStateMissing: a callback without a sign-in under way in this
	// browser: replayed, finished already, or started elsewhere.
	OIDCStateMissing OIDCErrorKind = "state-missing"
	// OIDCStateMismatch: the callback's state is not this browser's (CSRF).
	OIDCStateMismatch OIDCErrorKind = "state-mismatch"
	// OIDCNonceMismatch: the ID token was minted for another sign-in.
	OIDCNonceMismatch OIDCErrorKind = "nonce-mismatch"
	// OIDCExchangeFailed: the token endpoint refused the code.
	OIDCExchangeFailed OIDCErrorKind = "exchange-failed"
	// OIDCTokenInvalid: the ID token failed verification (signature, issuer,
	// audience, expiry) or is missing.
	OIDCTokenInvalid OIDCErrorKind = "token-invalid"
	// OIDCRefreshFailed: the sign-in could not be renewed.
	OIDCRefreshFailed OIDCErrorKind = "refresh-failed"
)

// OIDCError is a failed OIDC step. Detail is safe to show (it holds no
// token); Err is the cause, for the log.
type OIDCError struct {
	Kind   OIDCErrorKind
	Detail string
	Err    error
}

func (e *OIDCError) Error() string {
	s := "oidc " + string(e.Kind) + ": " + e.Detail
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *OIDCError) Unwrap() error { return e.Err }

// OIDCKind is err's OIDCErrorKind, or "" when err is no OIDCError.
func OIDCKind(err error) OIDCErrorKind {
	var oe *OIDCError
	if errors.As(err, &oe) {
		return oe.Kind
	}
	return ""
}

// ErrNotRenewed: an OIDC session's ID token expired and the provider did not
// renew it, so the session ended.
var ErrNotRenewed = errors.New("the sign-in expired and could not be renewed")
