// Package usage finds the objects that use a CSI driver: StorageClasses it
// provisions, PersistentVolumes it serves, CSINodes it is registered on and
// VolumeAttachments it made, each kind LISTed as the signed-in user when the
// CSIDriver page is opened. clusterdesk keeps no informer on these kinds:
// four more watches, and every PV held in memory, for a page that is rarely
// open, cost more than four LISTs when it is.
package usage

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// MaxNames is how many names of using objects are kept per kind.
const MaxNames = 20

// Driver counts the objects that use one CSI driver. Feed it every object of
// each kind with the Add methods, or the error that stopped a kind's LIST.
type Driver struct {
	Driver string
	Groups [4]Group // StorageClasses, PersistentVolumes, CSINodes, VolumeAttachments
}

// Group is one kind's count.
type Group struct {
	Kind  string // "StorageClasses"
	How   string // how an object is matched, e.g. "provisioner"
	Count int
	Names []string // the first MaxNames
	Err   string   // the LIST failed; Count is then a lower bound
}

// The indexes of Driver.Groups.
const (
	StorageClasses = iota
	PersistentVolumes
	CSINodes
	VolumeAttachments
)

// New starts counting for driver.
func New(driver string) *Driver {
	return &Driver{Driver: driver, Groups: [4]Group{
		{Kind: "StorageClasses", How: "provisioner is the driver: volumes of these classes are provisioned by it"},
		{Kind: "PersistentVolumes", How: "spec.csi.driver is the driver: these volumes are served by it"},
		{Kind: "CSINodes", How: "the driver is registered on these nodes (its node plugin runs there)"},
		{Kind: "VolumeAttachments", How: "spec.attacher is the driver: volumes it attached to nodes"},
	}}
}

func (u *Driver) add(g int, name string) {
	grp := &u.Groups[g]
	grp.Count++
	if len(grp.Names) < MaxNames {
		grp.Names = append(grp.Names, name)
	}
}

// AddStorageClass counts sc if the driver provisions it.
func (u *Driver) AddStorageClass(sc *storagev1.StorageClass) {
	if sc.Provisioner == u.Driver {
		u.add(StorageClasses, sc.Name)
	}
}

// AddPersistentVolume counts pv if it is a CSI volume of the driver.
func (u *Driver) AddPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == u.Driver {
		u.add(PersistentVolumes, pv.Name)
	}
}

// AddCSINode counts n if the driver is registered on it.
func (u *Driver) AddCSINode(n *storagev1.CSINode) {
	for _, d := range n.Spec.Drivers {
		if d.Name == u.Driver {
			u.add(CSINodes, n.Name)
			return
		}
	}
}

// AddVolumeAttachment counts va if the driver is its attacher.
func (u *Driver) AddVolumeAttachment(va *storagev1.VolumeAttachment) {
	if va.Spec.Attacher == u.Driver {
		u.add(VolumeAttachments, va.Name)
	}
}

// Fail records why group g could not be listed.
func (u *Driver) Fail(g int, err error) {
	if err != nil {
		u.Groups[g].Err = err.Error()
	}
}
