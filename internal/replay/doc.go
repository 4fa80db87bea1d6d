// Package replay replays the cluster's recorded writes (internal/ledger's
// WriteStore, issue 45) against a draft of a ValidatingAdmissionPolicy with
// all its bindings and against the version the cluster runs, and tells what the
// draft would have changed: who it would have stopped, warned or let
// through that the deployed version did not.
//
// It decides as the API server's ValidatingAdmissionPolicy plugin does,
// with the API server's own libraries: the matching of matchConstraints,
// the binding's matchResources and their namespace and object selectors is
// k8s.io/apiserver/pkg/admission/plugin/policy/matching's Matcher; the CEL
// (matchConditions, variables, validations, messageExpressions,
// auditAnnotations) is k8s.io/apiserver/pkg/admission/plugin/cel through
// internal/celmatch (CompiledPolicy, which follows validator.Validate); the
// policy is evaluated once per binding that matches, and the params and
// validationActions follow CollectParams
// (.../policy/generic/policy_dispatcher.go) and Dispatch
// (.../policy/validating/dispatcher.go).
//
// What a replay cannot know, it says: namespace labels are today's (a
// namespace deleted since has none), params are today's, an `authorizer`
// check is not asked again (it errs, and failurePolicy decides), a write
// whose object was not recorded (a refused patch, an object too large) is
// skipped and counted, and an update whose previous write was not recorded
// (or was a subresource's other kind, a Scale) is evaluated without its old
// object and counted. A write no policy saw is skipped and counted: refused
// by authorization, or refused as invalid by the object's own validation
// (a 422 naming no policy or webhook: it runs before validating
// admission); a refusal by another admission plugin (a 403 of the
// ServiceAccount plugin, say) is still replayed. Objects' integers are
// int64, as the API server hands them to CEL.
//
// It reads the writes a page at a time and keeps only counts, groups and a
// bounded list of the requests whose verdict changed: memory does not grow
// with the window.
package replay
