package plane

import "testing"

func TestAPIServerGOGCOnlyWhenAsked(t *testing.T) {
	if env := apiserverEnv(""); env != nil {
		t.Errorf("unset: env %q, want none (Go's default)", env)
	}
	if env := apiserverEnv("200"); len(env) != 1 || env[0] != "GOGC=200" {
		t.Errorf("200: env %q, want GOGC=200", env)
	}
}
