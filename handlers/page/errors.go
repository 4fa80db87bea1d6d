package page

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// ErrorPage turns any error into a status and a page: handlers' one
// HTTPErrorHandler renders it, and a feature shows its status and causes
// beside a form (a refused certificate upload). API server errors keep their
// own status, message and field causes; they are matched by type (apierrors),
// never by string.
func ErrorPage(err error) model.ErrorPage {
	var he *echo.HTTPError
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &he):
		msg, _ := he.Message.(string)
		if msg == "" {
			msg = http.StatusText(he.Code)
		}
		return model.ErrorPage{Status: he.Code, Title: http.StatusText(he.Code), Message: msg}
	case errors.As(err, &status):
		st := status.Status()
		p := model.ErrorPage{Status: int(st.Code), Title: http.StatusText(int(st.Code)), Message: st.Message}
		if p.Status == 0 {
			p.Status = http.StatusInternalServerError
		}
		if apierrors.IsNotFound(err) {
			p.Title = "Not found"
		}
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				cause := c.Message
				if c.Field != "" {
					cause = c.Field + ": " + cause
				}
				p.Causes = append(p.Causes, cause)
			}
		}
		return p
	default:
		if p, ok := Unreachable(err); ok {
			return p
		}
		return model.ErrorPage{Status: http.StatusInternalServerError, Title: "Internal error", Message: err.Error()}
	}
}
