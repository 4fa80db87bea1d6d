package present

import (
	"net/url"
	"strconv"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// PageSize is how many rows one list page shows. Filters, sort and counts
// always run over every object; only the rendering is paged.
const PageSize = 100

// paginate chooses the rows [lo, hi) of matched rows that page (1-based, size
// rows per page) shows, clamping a page past the end to the last page (a
// bookmark to page 40 of a list that shrank opens its last page), and builds
// the pager. href returns the URL of a page of the same view.
func paginate(page, size, matched int, href func(page int) string) (lo, hi int, p model.Pager) {
	size = max(size, 1)
	pages := max((matched+size-1)/size, 1)
	page = min(max(page, 1), pages)
	lo = min((page-1)*size, matched)
	hi = min(lo+size, matched)
	p = model.Pager{Page: page, Pages: pages, Matched: matched, To: hi}
	if hi > lo {
		p.From = lo + 1
	}
	if pages == 1 {
		return lo, hi, p
	}
	if page > 1 {
		p.Prev = href(page - 1)
	}
	if page < pages {
		p.Next = href(page + 1)
	}
	last := 0
	for n := 1; n <= pages; n++ {
		if n != 1 && n != pages && (n < page-2 || n > page+2) {
			continue
		}
		if last != 0 && n > last+1 {
			p.Links = append(p.Links, model.PageLink{Gap: true})
		}
		p.Links = append(p.Links, model.PageLink{Number: n, Href: href(n), Current: n == page})
		last = n
	}
	return lo, hi, p
}

// withPage adds page=n to a view's query (the first page is the default and
// left out) and returns the URL.
func withPage(action string, v url.Values, n int) string {
	if n > 1 {
		v = cloneValues(v)
		v.Set("page", strconv.Itoa(n))
	}
	if enc := v.Encode(); enc != "" {
		return action + "?" + enc
	}
	return action
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v)+1)
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
