// Package components holds the reusable templ components of clusterdesk. They
// render view models from views/model and nothing else.
package components

import (
	"strings"
	"unicode"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// ListTableID is the DOM id of the list fragment that filter and sort requests swap.
const ListTableID = "list-table"

// NormalizeTone maps an unknown or empty tone to ToneNeutral.
func NormalizeTone(t model.Tone) model.Tone {
	switch t {
	case model.ToneOK, model.TonePending, model.ToneWarning, model.ToneError, model.ToneUnknown:
		return t
	}
	return model.ToneNeutral
}

// The class strings are spelled out in full so Tailwind finds them when it
// scans this file.
var badgeClasses = map[model.Tone]string{
	model.ToneNeutral: "border-neutral-line bg-neutral-bg text-neutral-fg",
	model.ToneOK:      "border-ok-line bg-ok-bg text-ok-fg",
	model.TonePending: "border-pending-line bg-pending-bg text-pending-fg",
	model.ToneWarning: "border-warning-line bg-warning-bg text-warning-fg",
	model.ToneError:   "border-error-line bg-error-bg text-error-fg",
	model.ToneUnknown: "border-dashed border-neutral-line bg-canvas text-neutral-fg",
}

// BadgeClass returns the colour classes of a badge of tone t.
func BadgeClass(t model.Tone) string { return badgeClasses[NormalizeTone(t)] }

var bannerClasses = map[model.Tone]string{
	model.ToneNeutral: "border-line bg-subtle",
	model.ToneOK:      "border-ok-line bg-ok-bg",
	model.TonePending: "border-pending-line bg-pending-bg",
	model.ToneWarning: "border-warning-line bg-warning-bg",
	model.ToneError:   "border-error-line bg-error-bg",
	model.ToneUnknown: "border-dashed border-line bg-subtle",
}

var toneText = map[model.Tone]string{
	model.ToneNeutral: "text-muted",
	model.ToneOK:      "text-ok-fg",
	model.TonePending: "text-pending-fg",
	model.ToneWarning: "text-warning-fg",
	model.ToneError:   "text-error-fg",
	model.ToneUnknown: "text-muted",
}

// BannerClass returns the colour classes of a banner of tone t.
func BannerClass(t model.Tone) string { return bannerClasses[NormalizeTone(t)] }

// ToneTextClass returns the text colour of tone t (banner titles, icons).
func ToneTextClass(t model.Tone) string { return toneText[NormalizeTone(t)] }

// ToneLabel is the word a screen reader hears before a banner: the tone is
// never carried by colour alone.
func ToneLabel(t model.Tone) string {
	switch NormalizeTone(t) {
	case model.ToneOK:
		return "Success"
	case model.TonePending:
		return "Pending"
	case model.ToneWarning:
		return "Warning"
	case model.ToneError:
		return "Error"
	case model.ToneUnknown:
		return "Unknown"
	}
	return "Note"
}

// BannerRole is "alert" for errors, so assistive technology announces them,
// and "status" for everything else.
func BannerRole(t model.Tone) string {
	if NormalizeTone(t) == model.ToneError {
		return "alert"
	}
	return "status"
}

// BannerTestID is the banner's own TestID, or "banner-<tone>" when it has none.
func BannerTestID(b model.Banner) string {
	if b.TestID != "" {
		return b.TestID
	}
	return "banner-" + string(NormalizeTone(b.Tone))
}

// ActionButtonClass styles an action button by tone: approve is solid green,
// deny/delete is red.
func ActionButtonClass(t model.Tone) string {
	switch NormalizeTone(t) {
	case model.ToneOK:
		return "btn-ok"
	case model.ToneError, model.ToneWarning:
		return "btn-danger"
	}
	return "btn-primary"
}

// Slug turns a label into a test id fragment: "Signer name" → "signer-name",
// "spec.usages[0]" → "spec-usages-0".
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}

// AriaSort maps Column.Sorted to the aria-sort value; "" means no attribute.
func AriaSort(sorted string) string {
	switch sorted {
	case "asc":
		return "ascending"
	case "desc":
		return "descending"
	}
	return ""
}
