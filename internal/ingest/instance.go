package ingest

import "strings"

// instancePrefix is the path under which an API server instance posts its
// batches when its webhook kubeconfig names it: server:
// https://<webhook>/apiservers/<instance>. An audit event does not say which
// API server wrote it, and the recorded traffic is per instance (issue 46);
// the devcluster gives each instance its address as the EndpointSlice
// lists it (devcluster/internal/plane AuditWebhookPath).
const instancePrefix = "/apiservers/"

// maxInstance bounds an instance's name: a DNS name, or an address and port.
const maxInstance = 253

// instanceOf returns the instance a batch's path names: "" for /, the name
// for /apiservers/<name> (letters, digits and . : _ - only, at most
// maxInstance), or false for any other path. Only an authenticated sender
// gets here, and the name is stored with each of its series.
func instanceOf(path string) (string, bool) {
	if path == "/" {
		return "", true
	}
	name, ok := strings.CutPrefix(path, instancePrefix)
	if !ok || name == "" || len(name) > maxInstance {
		return "", false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".:_-", r)) {
			return "", false
		}
	}
	return name, true
}
