package celmatch

import celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"

// Compiler is the webhook dispatcher's condition compiler (compiler), for a
// caller that compiles webhooks' matchConditions once and evaluates them
// for many requests with the upstream matcher (the replay of recorded
// writes against a webhook configuration, internal/replay).
func Compiler() celplugin.ConditionCompiler { return compiler() }
