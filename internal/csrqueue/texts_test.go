package csrqueue

import (
	"strings"
	"testing"
	"unsafe"
)

// TestSharedTextKeepsOneCopy: equal texts made apart come back as one copy,
// with their bytes unchanged.
func TestSharedTextKeepsOneCopy(t *testing.T) {
	a := strings.Repeat("unknown signer: example.com/shared-text-test\n", 2)
	b := strings.Repeat("unknown signer: example.com/shared-text-test\n", 2)
	if unsafe.StringData(a) == unsafe.StringData(b) {
		t.Fatal("the test's texts are one copy already")
	}
	sa, sb := sharedText(a), sharedText(b)
	if sa != a || sb != b || unsafe.StringData(sa) != unsafe.StringData(sb) {
		t.Errorf("not one copy: %p %p", unsafe.StringData(sa), unsafe.StringData(sb))
	}
	if sharedText("") != "" {
		t.Error("empty text")
	}
}
