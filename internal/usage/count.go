package usage

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Lookup LISTs each kind as the signed-in user, paged, handing every object
// to fn (kube.Lookup).
type Lookup interface {
	StorageClasses(ctx context.Context, fn func(*storagev1.StorageClass)) error
	PersistentVolumes(ctx context.Context, fn func(*corev1.PersistentVolume)) error
	CSINodes(ctx context.Context, fn func(*storagev1.CSINode)) error
	VolumeAttachments(ctx context.Context, fn func(*storagev1.VolumeAttachment)) error
}

// Count lists the four kinds through l and counts what uses driver. A kind
// whose LIST fails keeps the count reached and says why (a refusal names
// the cause); the others are still counted. timeout bounds all four LISTs
// (zero: no bound), so a slow API server makes the page say "not listed",
// never hang.
func Count(ctx context.Context, l Lookup, driver string, timeout time.Duration) *Driver {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	u := New(driver)
	u.Fail(StorageClasses, refusal(l.StorageClasses(ctx, u.AddStorageClass)))
	u.Fail(PersistentVolumes, refusal(l.PersistentVolumes(ctx, u.AddPersistentVolume)))
	u.Fail(CSINodes, refusal(l.CSINodes(ctx, u.AddCSINode)))
	u.Fail(VolumeAttachments, refusal(l.VolumeAttachments(ctx, u.AddVolumeAttachment)))
	return u
}

// refusal words a failed LIST for the page: a refusal names the cause.
func refusal(err error) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("your identity may not list them. The API server said: %w", err)
	}
	return err
}
