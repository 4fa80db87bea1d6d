package main

import (
	"context"
	_ "embed"
	"html/template"
	"net/http"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

const (
	loginPath        = "/login"
	authRequestParam = "authRequestID"
)

//go:embed login.html
var loginHTML string

var loginPage = template.Must(template.New("login").Parse(loginHTML))

// login is the provider's own sign-in page: a username and password form
// (fields "username" and "password", buttons "Sign in" and "Deny"), which a
// browser or a Go client with a cookie jar fills in. zitadel's op leaves the
// login UI to the application; this is the whole of it.
type login struct {
	storage     *storage
	provider    op.Authorizer
	callback    func(context.Context, string) string
	interceptor *op.IssuerInterceptor
}

func newLogin(s *storage, p *op.Provider) *login {
	return &login{
		storage:     s,
		provider:    p,
		callback:    op.AuthCallbackURL(p),
		interceptor: op.NewIssuerInterceptor(p.IssuerFromRequest),
	}
}

func (l *login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("Cache-Control", "no-store")
	switch r.Method {
	case http.MethodGet:
		l.render(w, http.StatusOK, r.URL.Query().Get(authRequestParam), "")
	case http.MethodPost:
		l.interceptor.HandlerFunc(l.submit)(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (l *login) submit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "cannot parse form: "+err.Error(), http.StatusBadRequest)
		return
	}
	id := r.PostForm.Get(authRequestParam)
	if r.PostForm.Has("deny") {
		// Back to the client with error=access_denied, as a consent screen
		// that was declined would send it.
		req, err := l.storage.AuthRequestByID(r.Context(), id)
		if err != nil {
			l.render(w, http.StatusBadRequest, id, err.Error())
			return
		}
		op.AuthRequestError(w, r, req, oidc.ErrAccessDenied().WithDescription("the user denied the sign-in"), l.provider)
		return
	}
	if err := l.storage.checkPassword(id, r.PostForm.Get("username"), r.PostForm.Get("password")); err != nil {
		l.render(w, http.StatusUnauthorized, id, err.Error())
		return
	}
	http.Redirect(w, r, l.callback(r.Context(), id), http.StatusFound)
}

func (l *login) render(w http.ResponseWriter, status int, id, errMsg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, struct{ ID, Param, Error string }{id, authRequestParam, errMsg})
}
