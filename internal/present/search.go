package present

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// SearchLimit is how many hits per kind the search page shows; the rest are
// one click away on the kind's filtered list.
const SearchLimit = 10

// SearchSource is one kind's names as the handler read them from the cache,
// or why it could not.
type SearchSource struct {
	KindID    string
	Title     string
	Names     []string
	Forbidden bool   // the user may not list this kind: not searched
	Loading   bool   // the cache has not synced this kind yet
	Err       string // any other reason the kind could not be read
}

// Search finds the names that contain q (ignoring case) in every source and
// ranks them: an exact name first, then names starting with q, then names with
// a part (after - . / : _) starting with q, then any other; shorter names
// before longer ones, then alphabetically.
func Search(q string, sources []SearchSource) model.SearchPage {
	p := model.SearchPage{Query: q}
	if q == "" {
		return p
	}
	needle := strings.ToLower(q)
	for _, s := range sources {
		switch {
		case s.Forbidden:
			p.Notes = append(p.Notes, "Not searched: your Kubernetes identity may not list "+s.Title+".")
			continue
		case s.Loading:
			p.Notes = append(p.Notes, "Not searched: "+s.Title+" are still loading.")
			continue
		case s.Err != "":
			p.Notes = append(p.Notes, "Not searched: "+s.Title+" could not be read: "+s.Err)
			continue
		}
		type ranked struct {
			name string
			at   int
			rank int
		}
		var hits []ranked
		for _, n := range s.Names {
			lower := strings.ToLower(n)
			at := strings.Index(lower, needle)
			if at < 0 {
				continue
			}
			hits = append(hits, ranked{n, at, matchRank(lower, needle, at)})
		}
		if len(hits) == 0 {
			continue
		}
		slices.SortFunc(hits, func(a, b ranked) int {
			return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(len(a.name), len(b.name)), strings.Compare(a.name, b.name))
		})
		g := model.SearchGroup{
			KindID:  s.KindID,
			Title:   s.Title,
			ListURL: urls.WithQuery(urls.List(s.KindID), url.Values{"q": {q}}),
		}
		for i, h := range hits {
			if i == SearchLimit {
				g.More = len(hits) - SearchLimit
				break
			}
			g.Hits = append(g.Hits, hit(s.KindID, h.name, h.at, len(needle)))
		}
		p.Total += len(hits)
		p.Groups = append(p.Groups, g)
	}
	return p
}

// matchRank orders a match: 0 exact, 1 prefix, 2 a part of the name starts
// with the query, 3 anywhere else.
func matchRank(name, needle string, at int) int {
	switch {
	case name == needle:
		return 0
	case at == 0:
		return 1
	}
	for i := 0; i+len(needle) <= len(name); i++ {
		if i > 0 && strings.ContainsRune("-./:_", rune(name[i-1])) && strings.HasPrefix(name[i:], needle) {
			return 2
		}
	}
	return 3
}

// hit splits name around the match at [at, at+n) of its lower-cased form.
// Lower-casing can change the length of non-ASCII text; such a name is shown
// without a mark rather than cut in the wrong place.
func hit(kindID, name string, at, n int) model.SearchHit {
	h := model.SearchHit{Name: name, Href: urls.Object(kindID, name), Before: name}
	if len(strings.ToLower(name)) == len(name) {
		h.Before, h.Match, h.After = name[:at], name[at:at+n], name[at+n:]
	}
	return h
}
