package kube

// Key names the identity for caches of what it may see: a digest of how it
// acts, its user, groups and token, so the token itself is never a map key.
func (id Identity) Key() string { return cacheKey(id) }
