package editor

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/edit"
)

// decodeFormBase decodes an editor form's starting version once per request,
// before anything is sent to the API server. The field comes from the browser:
// one that expands beyond the editor's limit is a 413 (a legitimate one is
// the text the editor showed, which fit in that limit), a damaged one a 400.
// The decoded text only drives what the user is shown (preview, conflict and
// rebase diffs, ignored fields); the audit trail never reads it (edit_before.go).
func decodeFormBase(field string) (string, error) {
	if field == "" {
		return "", nil
	}
	text, err := edit.DecodeBase(field)
	switch {
	case errors.Is(err, edit.ErrBaseTooLarge):
		return "", echo.NewHTTPError(http.StatusRequestEntityTooLarge,
			"The form's starting version expands to more than "+Body+", the largest text the editor accepts, so it was refused "+
				"before anything reached the API server. Open the editor again.")
	case err != nil:
		return "", echo.NewHTTPError(http.StatusBadRequest, "The form's starting version could not be read ("+err.Error()+"). Open the editor again.")
	}
	return text, nil
}
