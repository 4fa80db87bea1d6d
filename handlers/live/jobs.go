package live

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/live"
)

// Background jobs (a replay of the recorded writes, handlers/replay) report
// to the page that started them over its event stream: the page's stream
// names the job (?job=), and receives the job's topic if, and only if, the
// job is the signed-in user's (Deps.JobTopic asks the job's registry, which
// knows no job of anyone else). Its progress messages are plain; its last
// one is sticky, so a stream that connects after the job ended still learns
// it did.

// jobTopic is the topic of the signed-in user's job id, or the error that
// refuses the stream: another user's job, or one this process does not
// run, is not found.
func (h *Handlers) jobTopic(c echo.Context, id string) (string, error) {
	if h.d.JobTopic == nil {
		return "", echo.NewHTTPError(http.StatusNotFound, "This console runs no background jobs.")
	}
	topic, ok := h.d.JobTopic(c, id)
	if !ok {
		return "", echo.NewHTTPError(http.StatusNotFound, "There is no such job of yours on this console.")
	}
	return topic, nil
}

// Publish sends a background job's messages to the streams that receive
// its topic.
func (u *Updates) Publish(msgs ...live.Message) { u.streams.Publish(msgs...) }

// Forget drops what the streams keep of a job's topic once the job is gone.
func (u *Updates) Forget(topic string) { u.streams.Forget(topic) }
