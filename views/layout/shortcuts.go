package layout

import (
	"strings"

	"github.com/clusterdesk/clusterdesk/views/model"
)

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

// KindShortcut is the key sequence that opens a kind's list, from the key
// its registry entry gives (handlers/kinds); "" for none.
func KindShortcut(key string) string {
	if key == "" {
		return ""
	}
	return "g " + key
}

// ShortcutGroups is everything the "?" dialog lists: nav is the
// navigation, whose items carry their shortcuts.
func ShortcutGroups(nav []model.NavItem) []ShortcutGroup {
	goTo := []Shortcut{{Keys: strings.Fields(HomeShortcut), Does: "Overview (home)"}}
	for _, it := range nav {
		if it.Shortcut != "" {
			goTo = append(goTo, Shortcut{Keys: strings.Fields(it.Shortcut), Does: it.Label})
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
		{Title: "Go to", Keys: goTo},
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
