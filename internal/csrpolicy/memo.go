package csrpolicy

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// compiledKept bounds the remembered compilations: a full memo starts over.
// 1,024 policy versions are far more than a cluster holds at once (a Set
// needs its current generation's, the list pages the same objects).
const compiledKept = 1024

// objectKey is one version of one policy object.
type objectKey struct{ uid, resourceVersion string }

// compiled keeps each policy object's compilation by UID and
// resourceVersion, for every reader in the process: compiling costs
// milliseconds a policy, a Set compiles a new generation on every change of
// any policy, and the policies' list's live rows would compile every policy
// on every change of one. A Program is never changed once compiled, so
// readers share it.
var compiled = struct {
	sync.Mutex
	m map[objectKey]Entry
}{m: map[objectKey]Entry{}}

// CompileObject reads and compiles one policy object: its program, or the
// error that keeps it from running. Each object version is compiled once;
// objects without a UID or resourceVersion (built in tests, never served)
// are compiled every time, as they cannot be told apart.
func CompileObject(u *unstructured.Unstructured) Entry {
	key := objectKey{string(u.GetUID()), u.GetResourceVersion()}
	remember := key.uid != "" && key.resourceVersion != ""
	if remember {
		compiled.Lock()
		e, ok := compiled.m[key]
		compiled.Unlock()
		if ok {
			return e
		}
	}
	pol, err := FromObject(u)
	e := Entry{Policy: pol, Err: err}
	if err == nil {
		e.Program, e.Err = Compile(pol)
	}
	if remember {
		compiled.Lock()
		if len(compiled.m) >= compiledKept {
			compiled.m = map[objectKey]Entry{}
		}
		compiled.m[key] = e
		compiled.Unlock()
	}
	return e
}
