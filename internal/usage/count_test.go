package usage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const drv = "ebs.csi.aws.com"

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// fakeLookup hands out a few objects of each kind, one of them the driver's,
// and fails the kinds in errs after handing out what it has.
type fakeLookup struct {
	errs        map[int]error
	hadDeadline bool
}

func (l *fakeLookup) StorageClasses(ctx context.Context, fn func(*storagev1.StorageClass)) error {
	_, l.hadDeadline = ctx.Deadline()
	fn(&storagev1.StorageClass{ObjectMeta: meta("gp3"), Provisioner: drv})
	fn(&storagev1.StorageClass{ObjectMeta: meta("nfs"), Provisioner: "nfs.csi.k8s.io"})
	return l.errs[StorageClasses]
}

func (l *fakeLookup) PersistentVolumes(_ context.Context, fn func(*corev1.PersistentVolume)) error {
	for _, d := range []string{drv, drv, "other"} {
		fn(&corev1.PersistentVolume{ObjectMeta: meta("pv-" + d), Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: d}}}})
	}
	return l.errs[PersistentVolumes]
}

func (l *fakeLookup) CSINodes(_ context.Context, fn func(*storagev1.CSINode)) error {
	fn(&storagev1.CSINode{ObjectMeta: meta("node-a"), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "other"}, {Name: drv}}}})
	return l.errs[CSINodes]
}

func (l *fakeLookup) VolumeAttachments(_ context.Context, fn func(*storagev1.VolumeAttachment)) error {
	fn(&storagev1.VolumeAttachment{ObjectMeta: meta("va-1"), Spec: storagev1.VolumeAttachmentSpec{Attacher: "other"}})
	return l.errs[VolumeAttachments]
}

func TestCount(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumes"}, "", errors.New("no"))
	for _, tc := range []struct {
		name   string
		errs   map[int]error
		counts [4]int
		errIn  [4]string // substring of each group's Err; "" for none
	}{
		{"every kind listed", nil, [4]int{1, 2, 1, 0}, [4]string{}},
		{"a refusal names the cause and the others are counted", map[int]error{PersistentVolumes: forbidden},
			[4]int{1, 2, 1, 0}, [4]string{"", "your identity may not list them. The API server said: ", "", ""}},
		{"a LIST cut short keeps the count reached", map[int]error{StorageClasses: context.DeadlineExceeded, VolumeAttachments: errors.New("unreachable")},
			[4]int{1, 2, 1, 0}, [4]string{"context deadline exceeded", "", "", "unreachable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &fakeLookup{errs: tc.errs}
			u := Count(context.Background(), l, drv, time.Minute)
			if !l.hadDeadline {
				t.Error("the LISTs ran without the timeout")
			}
			for i, g := range u.Groups {
				if g.Count != tc.counts[i] || len(g.Names) != g.Count {
					t.Errorf("%s: %d (%v); want %d", g.Kind, g.Count, g.Names, tc.counts[i])
				}
				if want := tc.errIn[i]; (want == "") != (g.Err == "") || !strings.Contains(g.Err, want) {
					t.Errorf("%s: Err %q; want %q", g.Kind, g.Err, want)
				}
			}
		})
	}
}

// TestNamesAreBounded: a driver with thousands of volumes keeps MaxNames names
// per kind and the full count.
func TestNamesAreBounded(t *testing.T) {
	u := New(drv)
	for range 5000 {
		u.AddPersistentVolume(&corev1.PersistentVolume{ObjectMeta: meta("pv"), Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: drv}}}})
	}
	if g := u.Groups[PersistentVolumes]; g.Count != 5000 || len(g.Names) != MaxNames {
		t.Errorf("count %d with %d names; want 5000 with %d", g.Count, len(g.Names), MaxNames)
	}
}
