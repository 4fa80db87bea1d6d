// Package kube is clusterdesk's only user of client-go: kubeconfig loading, the
// registry of the kinds the console shows, one shared informer cache per kind with
// listers, writes as the signed-in user (Writer), and access checks (Access).
package kube
