package model

// InstancesPage lists the custom resources of one CRD with the columns the API
// server's Table format gives (the CRD's additionalPrinterColumns), one page
// at a time.
type InstancesPage struct {
	Chrome     Chrome
	CRD        string // the CRD's name, "widgets.example.com"
	CRDHref    string
	Kind       string // "Widget"
	Resource   string // "widgets.example.com/v1"
	Namespaced bool
	Namespace  string // the namespace filter; "" for all namespaces
	// Selector is the label selector (kubectl -l syntax) as typed;
	// SelectorError says why it is not one (the page answers 400, no rows).
	Selector      string
	SelectorError string
	Count         string // "12" / "at least 500" / "" when not counted
	Columns       []Column
	Rows          []Row
	NextHref      string // the next page; "" on the last
	FirstHref     string // back to the first page; "" on the first
	NewHref       string // the create page; "" in read-only mode
	CleanupHref   string // the cleanup preview; "" in read-only mode
	TickAction    string // where "Delete selected…" posts the ticked rows; "" in read-only mode
	Problem       *Banner
	Limit         int64
}

// InstancePage shows one custom resource: a few facts and its YAML.
type InstancePage struct {
	Chrome     Chrome
	Kind       string
	Name       string
	Namespace  string
	Fields     []Field
	YAML       string
	EditHref   string // "" in read-only mode
	DeleteHref string // "" in read-only mode
}
