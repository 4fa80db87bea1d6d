package layout

// Shortcut is one key (or key sequence) and what it does.
type Shortcut struct {
	Keys []string // pressed one after another, e.g. {"g", "c"}
	Does string
}

// ShortcutGroup is a titled part of the shortcuts dialog.
type ShortcutGroup struct {
	Title string
	Keys  []Shortcut
}

// Key sequences of web/js/shortcuts.js and search.js: the dialog lists them
// and the links carry them (data-shortcut), so the script and the list cannot
// disagree.
const (
	HomeShortcut   = "g h"
	SearchShortcut = "s"
)

// kindShortcuts maps a kind id to the key after "g" that opens its list.
var kindShortcuts = map[string]string{
	"csrs":               "c",
	"flowschemas":        "f",
	"prioritylevels":     "p",
	"crds":               "r",
	"validatingwebhooks": "w",
	"mutatingwebhooks":   "m",
	"csidrivers":         "d",
}

// KindShortcut is the key sequence that opens a kind's list ("" for none).
func KindShortcut(kind string) string {
	if k, ok := kindShortcuts[kind]; ok {
		return "g " + k
	}
	return ""
}

// ShortcutGroups is everything the "?" dialog lists. kinds are the
// navigation's kinds (id, title) in order.
func ShortcutGroups(kinds [][2]string) []ShortcutGroup {
	nav := []Shortcut{{Keys: []string{"g", "h"}, Does: "Overview (home)"}}
	for _, k := range kinds {
		if key, ok := kindShortcuts[k[0]]; ok {
			nav = append(nav, Shortcut{Keys: []string{"g", key}, Does: k[1]})
		}
	}
	return []ShortcutGroup{
		{Title: "Anywhere", Keys: []Shortcut{
			{Keys: []string{"?"}, Does: "Show this list of shortcuts"},
			{Keys: []string{SearchShortcut}, Does: "Search objects by name across all kinds (also Ctrl K)"},
			{Keys: []string{"/"}, Does: "Filter the list on this page (search when the page has no filter)"},
			{Keys: []string{"Esc"}, Does: "Leave the filter or search box; close this dialog"},
			{Keys: []string{"Tab"}, Does: "Move to the next link or control (Shift Tab: back)"},
		}},
		{Title: "Go to", Keys: nav},
		{Title: "CertificateSigningRequests queue", Keys: []Shortcut{
			{Keys: []string{"j"}, Does: "Next request"},
			{Keys: []string{"k"}, Does: "Previous request"},
			{Keys: []string{"x"}, Does: "Tick or untick the current request"},
			{Keys: []string{"a"}, Does: "Approve the ticked requests (or the current one)"},
			{Keys: []string{"d"}, Does: "Deny the ticked requests (or the current one)"},
			{Keys: []string{"Enter"}, Does: "Open the current request"},
		}},
	}
}
