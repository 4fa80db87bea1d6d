// Package cleanup is what a bulk deletion does, step by step, as the signed-in
// user: choose the objects (ticked rows, or everything a filter of state, age,
// signer and label selector matches), fingerprint exactly that set for the
// confirmation, dry-run the deletions the preview shows, and delete with each
// object's UID as a precondition, a result per object, every deletion audited.
// No HTTP, no templates: handlers parse and render.
package cleanup
