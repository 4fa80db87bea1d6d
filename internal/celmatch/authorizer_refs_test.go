package celmatch

import "testing"

func TestAsksAuthorizerReadsTheExpression(t *testing.T) {
	vars := map[string]string{
		"mayList":  "authorizer.group('').resource('pods').check('list').allowed()",
		"viaOther": "variables.mayList && true",
		"plain":    "object.metadata.name == 'x'",
		"loopA":    "variables.loopB",
		"loopB":    "variables.loopA",
	}
	for expr, want := range map[string]bool{
		"authorizer.group('apps').resource('deployments').check('create').allowed()":                       true,
		"request.userInfo.username != 'x' || authorizer.serviceAccount('ns', 'sa').check('get').allowed()": true,
		"variables.mayList":  true,
		"variables.viaOther": true, // through another variable
		"variables.plain":    false,
		"variables.loopA":    false, // a cycle ends
		"object.metadata.annotations['authorizer'] == 'yes'": false, // the word in a string
		"has(object.spec.authorizer)":                        false, // a field of that name
		"authorizer.group(":                                  true,  // does not parse: the word decides
		"object.metadata.name == ":                           false,
	} {
		if got := asksAuthorizer(expr, vars); got != want {
			t.Errorf("%q: %v, want %v", expr, got, want)
		}
	}
}
