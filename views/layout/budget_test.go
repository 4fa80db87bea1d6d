package layout_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/clusterdesk/clusterdesk/static"
	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// budgetBytes is the most JS+CSS, gzip-compressed, that one page may load.
const budgetBytes = 150 * 1024

// budgetExcluded are bundles that load only on the pages that need them and
// do not count: the YAML editor (CodeMirror) on the editor pages.
var budgetExcluded = map[string]bool{"editor.js": true}

// pageTypes renders every kind of full page with a small model: what a page
// loads is decided by the layout and the page's own template, not its data.
func pageTypes() map[string]templ.Component {
	ch := viewtest.Chrome(false)
	return map[string]templ.Component{
		"home":            pages.Home(model.HomePage{Chrome: ch}),
		"list":            pages.List(viewtest.ListPage()),
		"detail":          pages.Detail(viewtest.DetailPage()),
		"csr queue":       pages.CSRQueue(model.CSRQueuePage{Chrome: ch}),
		"csr detail":      pages.CSRDetail(model.CSRDetailPage{DetailPage: viewtest.DetailPage()}),
		"flowschema list": pages.FlowSchemaList(model.FlowSchemaListPage{List: viewtest.ListPage()}),
		"classify":        pages.Classify(model.ClassifyPage{Chrome: ch}),
		"schema":          pages.Schema(model.SchemaPage{Chrome: ch}),
		"edit":            pages.Edit(model.EditPage{Chrome: ch}),
		"search":          pages.Search(model.SearchPage{Chrome: ch, Query: "x"}),
		"error":           pages.Error(model.ErrorPage{Chrome: ch, Status: 404}),
		"login":           pages.Login(model.LoginPage{}),
		"ledger":          pages.Ledger(model.LedgerPage{Chrome: ch}),
		"ledger history":  pages.LedgerHistory(model.LedgerHistoryPage{Chrome: ch}),
	}
}

func gzipSize(t *testing.T, b []byte) int {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// TestPageWeightBudget sums the gzip-compressed size of every script and
// stylesheet each page type references (as the server sends them: /static/ is
// gzip-encoded) and fails over budgetBytes. It needs the built bundle
// (npm run build); without it the sizes would be meaningless, so it fails.
func TestPageWeightBudget(t *testing.T) {
	if err := static.Check(); err != nil {
		t.Fatalf("the front-end bundle is not built, so its weight cannot be measured: %v", err)
	}
	types := pageTypes()
	for _, name := range slices.Sorted(maps.Keys(types)) {
		page := types[name]
		doc, _ := viewtest.Render(t, page)
		var refs []string
		doc.Find("script[src]").Each(func(_ int, s *goquery.Selection) { refs = append(refs, s.AttrOr("src", "")) })
		doc.Find(`link[rel=stylesheet]`).Each(func(_ int, s *goquery.Selection) { refs = append(refs, s.AttrOr("href", "")) })
		if len(refs) == 0 {
			t.Errorf("%s: no scripts or stylesheets found", name)
			continue
		}
		total, excluded := 0, 0
		var parts []string
		for _, ref := range refs {
			u, err := url.Parse(ref)
			if err != nil || !strings.HasPrefix(u.Path, static.Prefix) {
				t.Errorf("%s: %q is not served from %s (nothing may come from elsewhere)", name, ref, static.Prefix)
				continue
			}
			file := strings.TrimPrefix(u.Path, static.Prefix)
			b, err := fs.ReadFile(static.FS, file)
			if err != nil {
				t.Errorf("%s: %s: %v", name, file, err)
				continue
			}
			n := gzipSize(t, b)
			if budgetExcluded[file] {
				excluded += n
				parts = append(parts, file+" (excluded) "+kb(n))
				continue
			}
			total += n
			parts = append(parts, file+" "+kb(n))
		}
		t.Logf("%-16s %s gzip JS+CSS: %s", name, kb(total), strings.Join(parts, ", "))
		if total > budgetBytes {
			t.Errorf("%s loads %s of JS+CSS (gzip), over the budget of %s", name, kb(total), kb(budgetBytes))
		}
	}
}

func kb(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1024) }
