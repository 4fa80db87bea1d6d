package present

import (
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/usage"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func TestCSIUsageCountsOnlyTheDriver(t *testing.T) {
	const drv = "ebs.csi.aws.com"
	u := usage.New(drv)
	u.AddStorageClass(&storagev1.StorageClass{ObjectMeta: meta("gp3"), Provisioner: drv})
	u.AddStorageClass(&storagev1.StorageClass{ObjectMeta: meta("nfs"), Provisioner: "nfs.csi.k8s.io"})
	u.AddStorageClass(&storagev1.StorageClass{ObjectMeta: meta("legacy"), Provisioner: "kubernetes.io/aws-ebs"})
	u.AddPersistentVolume(&corev1.PersistentVolume{ObjectMeta: meta("pv-1"), Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: drv}}}})
	u.AddPersistentVolume(&corev1.PersistentVolume{ObjectMeta: meta("pv-hostpath"), Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}})
	u.AddPersistentVolume(&corev1.PersistentVolume{ObjectMeta: meta("pv-other"), Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "other"}}}})
	u.AddCSINode(&storagev1.CSINode{ObjectMeta: meta("node-a"), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "other"}, {Name: drv}}}})
	u.AddCSINode(&storagev1.CSINode{ObjectMeta: meta("node-b"), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "other"}}}})
	u.AddVolumeAttachment(&storagev1.VolumeAttachment{ObjectMeta: meta("va-1"), Spec: storagev1.VolumeAttachmentSpec{Attacher: drv}})
	u.Fail(usage.VolumeAttachments, errors.New("forbidden"))
	for i := range 30 {
		u.AddPersistentVolume(&corev1.PersistentVolume{ObjectMeta: meta("pv-many-" + itoa(i)), Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: drv}}}})
	}
	want := []struct {
		count int
		first []string
		err   string
	}{
		{1, []string{"gp3"}, ""},
		{31, []string{"pv-1", "pv-many-0"}, ""},
		{1, []string{"node-a"}, ""},
		{1, []string{"va-1"}, "forbidden"},
	}
	for i, w := range want {
		g := u.Groups[i]
		if g.Count != w.count || !slices.Equal(g.Names[:len(w.first)], w.first) || g.Err != w.err || len(g.Names) > usage.MaxNames {
			t.Errorf("%s: %+v", g.Kind, g)
		}
	}
	p := CSIDriverDetail(&storagev1.CSIDriver{ObjectMeta: meta(drv)}, u, time.Now())
	rows := p.Insights[1].Table.Rows
	if len(rows) != 4 || rows[1].Cells[1].Text != "31" || rows[1].Cells[3].Lines[usage.MaxNames] != "… and 11 more" || rows[3].Cells[1].Text != "?" {
		t.Errorf("usage rows %+v", rows)
	}
}

func TestCSIDriverDetailExplainsEveryField(t *testing.T) {
	d := &storagev1.CSIDriver{ObjectMeta: meta("x"), Spec: storagev1.CSIDriverSpec{
		AttachRequired: ptr.To(false), VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral},
		TokenRequests: []storagev1.TokenRequest{{Audience: "vault", ExpirationSeconds: ptr.To[int64](600)}},
	}}
	p := CSIDriverDetail(d, nil, time.Now())
	spec := p.Insights[0]
	got := map[string]model.RichField{}
	for _, f := range spec.Fields {
		if f.Hint == "" {
			t.Errorf("%s has no explanation", f.Label)
		}
		got[f.Label] = f
	}
	if len(got) != 11 {
		t.Errorf("%d fields, want every CSIDriverSpec field (11)", len(got))
	}
	for label, immutable := range map[string]bool{"attachRequired": true, "volumeLifecycleModes": true, "podInfoOnMount": false, "fsGroupPolicy": false} {
		if has := len(got[label].Value.Badges) == 1 && got[label].Value.Badges[0] == immutableBadge; has != immutable {
			t.Errorf("%s immutable badge %v, want %v", label, has, immutable)
		}
	}
	for label, want := range map[string]string{"attachRequired": "false", "podInfoOnMount": "unset: false", "volumeLifecycleModes": "Ephemeral",
		"tokenRequests": "vault for 600s", "fsGroupPolicy": "unset: ReadWriteOnceWithFSType"} {
		if got[label].Value.Text != want {
			t.Errorf("%s = %q, want %q", label, got[label].Value.Text, want)
		}
	}
	if p.Insights[1].Table != nil || p.Insights[1].Intro == "" {
		t.Error("without lookups the usage section should say so and show no table")
	}
}
