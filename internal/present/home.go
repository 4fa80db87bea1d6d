package present

import (
	"strconv"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// KindSummary lays out one kind's card on the home page from its cache state
// ("syncing", "synced", "forbidden", "error").
func KindSummary(id, title, state string, count int, err error) model.KindSummary {
	s := model.KindSummary{ID: id, Title: title, Href: urls.List(id)}
	switch state {
	case "synced":
		s.Count = strconv.Itoa(count)
		s.Status = model.Badge{Text: "Synced", Tone: model.ToneOK}
	case "forbidden":
		s.Status = model.Badge{Text: "Forbidden", Tone: model.ToneError, Hint: "your identity may not list this kind"}
		s.Note = "Your identity may not list these."
	case "error":
		s.Status = model.Badge{Text: "Error", Tone: model.ToneError}
	default:
		s.Status = model.Badge{Text: "Syncing", Tone: model.TonePending}
	}
	if err != nil {
		s.Note = err.Error()
	}
	return s
}

// KindNotServed is the card of a kind the API server does not serve, with
// why (notServed: "not installed in this cluster"): a neutral note, not an
// error, since nothing failed.
func KindNotServed(id, title, why string) model.KindSummary {
	return model.KindSummary{ID: id, Title: title, Href: urls.List(id),
		Status: model.Badge{Text: "Absent", Tone: model.ToneNeutral, Hint: why},
		Note:   strings.ToUpper(why[:1]) + why[1:] + "."}
}
