// Package charttest holds the tests of the Helm chart charts/clusterdesk: helm
// lint and helm template for every example values file, the values schema's
// refusals, the chart's drift from deploy/ (the hand-kept kustomize manifests,
// compared object by object after parsing), and, with the integration tag, a
// server-side dry run of everything the chart renders on the devcluster and
// the console started as the rendered Deployment would start it.
//
// The tests run the helm CLI that `make helm` builds from its Go module into
// .cache/bin (HELM overrides the path); without it they fail, not skip.
package charttest
