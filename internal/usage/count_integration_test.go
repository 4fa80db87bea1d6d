//go:build integration

package usage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

func lookupAs(t *testing.T, identity string) *kube.Lookup {
	t.Helper()
	l, err := kube.NewLookup(testcluster.RestConfig(t, identity))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// seedDriver creates a CSIDriver with a StorageClass, two PersistentVolumes
// and a VolumeAttachment using it, deleted when the test ends.
func seedDriver(t *testing.T) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	name := fmt.Sprintf("usecase-csr-%d", time.Now().UnixNano())
	drv := name + ".csi.clusterdesk.dev"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: drv}}, metav1.CreateOptions{})
	must(err)
	t.Cleanup(func() { _ = cs.StorageV1().CSIDrivers().Delete(context.Background(), drv, metav1.DeleteOptions{}) })
	_, err = cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: drv}, metav1.CreateOptions{})
	must(err)
	t.Cleanup(func() { _ = cs.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	for _, pv := range []string{name + "-a", name + "-b"} {
		_, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: drv, VolumeHandle: pv}},
			}}, metav1.CreateOptions{})
		must(err)
		t.Cleanup(func() { _ = cs.CoreV1().PersistentVolumes().Delete(context.Background(), pv, metav1.DeleteOptions{}) })
	}
	_, err = cs.StorageV1().VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: drv, NodeName: "no-such-node",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(name + "-a")}}}, metav1.CreateOptions{})
	must(err)
	t.Cleanup(func() {
		_ = cs.StorageV1().VolumeAttachments().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return drv
}

// TestCountOnTheDevcluster counts, as the auditor (who may list the four
// kinds), the objects created for a driver, and nothing of other drivers.
func TestCountOnTheDevcluster(t *testing.T) {
	drv := seedDriver(t)
	u := Count(context.Background(), lookupAs(t, testcluster.Auditor), drv, 5*time.Second)
	for i, want := range [4]int{1, 2, 0, 1} {
		g := u.Groups[i]
		if g.Err != "" || g.Count != want {
			t.Errorf("%s: %d (%v), err %q; want %d", g.Kind, g.Count, g.Names, g.Err, want)
		}
		for _, n := range g.Names {
			if !strings.HasPrefix(n, strings.TrimSuffix(drv, ".csi.clusterdesk.dev")) {
				t.Errorf("%s: %s is not one of the driver's objects", g.Kind, n)
			}
		}
	}
}

// TestCountAsSomeoneWhoMayNotList: the approver may list none of the kinds;
// each group says it was refused, and why.
func TestCountAsSomeoneWhoMayNotList(t *testing.T) {
	u := Count(context.Background(), lookupAs(t, testcluster.Approver), "any.csi.clusterdesk.dev", 5*time.Second)
	for _, g := range u.Groups {
		if g.Count != 0 || !strings.HasPrefix(g.Err, "your identity may not list them. The API server said: ") || !strings.Contains(g.Err, "forbidden") {
			t.Errorf("%s: count %d, err %q; want a refusal naming its cause", g.Kind, g.Count, g.Err)
		}
	}
}
