package present

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// usageNames is how many names of using objects a page lists per kind.
const usageNames = 20

// CSIUsage counts the objects that use one CSI driver. Feed it every object
// of each kind with the Add methods, or the error that stopped a kind's LIST.
type CSIUsage struct {
	Driver string
	Groups [4]CSIUsageGroup // StorageClasses, PersistentVolumes, CSINodes, VolumeAttachments
}

// CSIUsageGroup is one kind's count.
type CSIUsageGroup struct {
	Kind  string // "StorageClasses"
	How   string // how an object is matched, e.g. "provisioner"
	Count int
	Names []string // the first usageNames
	Err   string   // the LIST failed; Count is then a lower bound
}

// The indexes of CSIUsage.Groups.
const (
	UsageStorageClasses = iota
	UsagePersistentVolumes
	UsageCSINodes
	UsageVolumeAttachments
)

// NewCSIUsage starts counting for driver.
func NewCSIUsage(driver string) *CSIUsage {
	return &CSIUsage{Driver: driver, Groups: [4]CSIUsageGroup{
		{Kind: "StorageClasses", How: "provisioner is the driver: volumes of these classes are provisioned by it"},
		{Kind: "PersistentVolumes", How: "spec.csi.driver is the driver: these volumes are served by it"},
		{Kind: "CSINodes", How: "the driver is registered on these nodes (its node plugin runs there)"},
		{Kind: "VolumeAttachments", How: "spec.attacher is the driver: volumes it attached to nodes"},
	}}
}

func (u *CSIUsage) add(g int, name string) {
	grp := &u.Groups[g]
	grp.Count++
	if len(grp.Names) < usageNames {
		grp.Names = append(grp.Names, name)
	}
}

// AddStorageClass counts sc if the driver provisions it.
func (u *CSIUsage) AddStorageClass(sc *storagev1.StorageClass) {
	if sc.Provisioner == u.Driver {
		u.add(UsageStorageClasses, sc.Name)
	}
}

// AddPersistentVolume counts pv if it is a CSI volume of the driver.
func (u *CSIUsage) AddPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == u.Driver {
		u.add(UsagePersistentVolumes, pv.Name)
	}
}

// AddCSINode counts n if the driver is registered on it.
func (u *CSIUsage) AddCSINode(n *storagev1.CSINode) {
	for _, d := range n.Spec.Drivers {
		if d.Name == u.Driver {
			u.add(UsageCSINodes, n.Name)
			return
		}
	}
}

// AddVolumeAttachment counts va if the driver is its attacher.
func (u *CSIUsage) AddVolumeAttachment(va *storagev1.VolumeAttachment) {
	if va.Spec.Attacher == u.Driver {
		u.add(UsageVolumeAttachments, va.Name)
	}
}

// Fail records why group g could not be listed.
func (u *CSIUsage) Fail(g int, err error) {
	if err != nil {
		u.Groups[g].Err = err.Error()
	}
}
