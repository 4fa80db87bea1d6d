package present

import (
	"strconv"
	"strings"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/clusterdesk/clusterdesk/internal/usage"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// immutableBadge marks a field the API server refuses to change.
var immutableBadge = model.Badge{Text: "immutable", Tone: model.ToneWarning,
	Hint: "the API server refuses changes: to change it, delete the CSIDriver and create it again"}

// csiField is one spec field: its value (or what unset means) and a plain
// explanation.
type csiField struct {
	label, value, explain string
	immutable             bool
}

func setOr(set bool, value, unset string) string {
	if set {
		return value
	}
	return "unset: " + unset
}

func boolOr(b *bool, unset string) string {
	if b == nil {
		return "unset: " + unset
	}
	return strconv.FormatBool(*b)
}

// csiFields lists every CSIDriverSpec field of storage.k8s.io/v1 (Kubernetes
// 1.37). Immutability follows the API's own documentation: attachRequired and
// volumeLifecycleModes; podInfoOnMount and fsGroupPolicy became mutable in 1.29.
func csiFields(d *storagev1.CSIDriver) []csiField {
	s := d.Spec
	tokens := make([]string, 0, len(s.TokenRequests))
	for _, t := range s.TokenRequests {
		a := t.Audience
		if a == "" {
			a = "(the API server's audience)"
		}
		if t.ExpirationSeconds != nil {
			a += " for " + strconv.FormatInt(*t.ExpirationSeconds, 10) + "s"
		}
		tokens = append(tokens, a)
	}
	period := "unset: allocatable volume count never refreshed"
	if s.NodeAllocatableUpdatePeriodSeconds != nil {
		period = strconv.FormatInt(*s.NodeAllocatableUpdatePeriodSeconds, 10) + "s"
	}
	fsg := "unset: ReadWriteOnceWithFSType"
	if s.FSGroupPolicy != nil {
		fsg = string(*s.FSGroupPolicy)
	}
	return []csiField{
		{"attachRequired", boolOr(s.AttachRequired, "true"),
			"Kubernetes attaches each volume to its node (a VolumeAttachment, handled by the driver's external-attacher) before mounting it.", true},
		{"podInfoOnMount", boolOr(s.PodInfoOnMount, "false"),
			"The kubelet passes the pod's name, namespace, UID and service account to the driver when it mounts a volume.", false},
		{"volumeLifecycleModes", setOr(len(s.VolumeLifecycleModes) > 0, csiModes(d), "Persistent"),
			"Persistent: volumes through PersistentVolumeClaims; Ephemeral: inline volumes in the pod spec that live and die with the pod.", true},
		{"storageCapacity", boolOr(s.StorageCapacity, "false"),
			"The scheduler only places pods where the driver reported enough capacity (CSIStorageCapacity objects).", false},
		{"fsGroupPolicy", fsg,
			"Whether the kubelet changes volume ownership to the pod's fsGroup: File always, None never, ReadWriteOnceWithFSType only for RWO volumes with a filesystem type.", false},
		{"tokenRequests", setOr(len(tokens) > 0, strings.Join(tokens, ", "), "no tokens"),
			"The kubelet passes the pod's service account tokens for these audiences to the driver, e.g. to fetch secrets as the pod.", false},
		{"requiresRepublish", boolOr(s.RequiresRepublish, "false"),
			"The kubelet calls NodePublishVolume periodically, e.g. to refresh tokens or rotated content in mounted volumes.", false},
		{"seLinuxMount", boolOr(s.SELinuxMount, "false"),
			"The driver can mount each volume with its own SELinux context (-o context), sparing a recursive relabel of every file.", false},
		{"nodeAllocatableUpdatePeriodSeconds", period,
			"How often the kubelet refreshes how many volumes of this driver each node can still take (CSINode allocatable).", false},
		{"serviceAccountTokenInSecrets", boolOr(s.ServiceAccountTokenInSecrets, "false"),
			"The kubelet passes service account tokens in the CSI Secrets field instead of the volume context, which drivers may log.", false},
		{"preventPodSchedulingIfMissing", boolOr(s.PreventPodSchedulingIfMissing, "false"),
			"The scheduler keeps pods using this driver off nodes where the driver is not registered.", false},
	}
}

func csiSpecInsight(d *storagev1.CSIDriver) model.Insight {
	in := model.Insight{Title: "Spec", TestID: "csi-spec",
		Intro: "Every field of the CSIDriver's spec. Fields marked immutable cannot be edited: the CSIDriver must be deleted and created again."}
	for _, f := range csiFields(d) {
		v := model.Rich{Text: f.value, Mono: !strings.HasPrefix(f.value, "unset")}
		if f.immutable {
			v.Badges = []model.Badge{immutableBadge}
		}
		in.Fields = append(in.Fields, model.RichField{Label: f.label, Value: v, Hint: f.explain})
	}
	return in
}

func csiUsageInsight(u *usage.Driver) model.Insight {
	in := model.Insight{Title: "Used by", TestID: "csi-usage"}
	if u == nil {
		in.Intro = "The objects that use this driver were not looked up."
		return in
	}
	in.Intro = "Counted from LISTs of these kinds when this page was opened: clusterdesk keeps no informer on them, so the count is as of now."
	t := &model.RichTable{Columns: []string{"Kind", "Count", "Matched by", "Names"}}
	for _, g := range u.Groups {
		count := model.Rich{Text: strconv.Itoa(g.Count)}
		if g.Err != "" {
			count = model.Rich{Text: "?", Badges: []model.Badge{{Text: "not listed", Tone: model.ToneWarning, Hint: g.Err}}}
		}
		names := model.Rich{Lines: g.Names, Mono: true}
		if more := g.Count - len(g.Names); more > 0 {
			names.Lines = append(append([]string{}, g.Names...), "… and "+strconv.Itoa(more)+" more")
		}
		t.Rows = append(t.Rows, model.RichRow{TestID: "usage-" + strings.ToLower(g.Kind), Cells: []model.Rich{
			{Text: g.Kind}, count, {Text: g.How}, names,
		}})
	}
	in.Table = t
	return in
}
