package flowschemaform

import (
	"net/url"
	"reflect"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
)

// FuzzFlowSchemaForm decodes arbitrary posted bodies as the FlowSchema form,
// applies the op they name, and builds the spec and hints. Nothing may panic;
// no list grows past the decoder's bound; what the form posts back for the
// decoded form decodes to the same form; every local error names a field.
func FuzzFlowSchemaForm(f *testing.F) {
	f.Add(form.Values(twoRuleForm()).Encode() + "&op=preview")
	f.Add(form.Values(form.New()).Encode() + "&op=add-subject:0")
	f.Add("r0.rule=1&r0.s3.kind=ServiceAccount&r0.s3.namespace=ns&r0.s3.name=*&op=remove-subject:0:0")
	f.Add("precedence=ten&r9.rr2.verbs=*&r9.rr2.verbs=get&r9.nr0.urls=/a//b,*&op=remove-rule:0")
	f.Add("r999.rule=1&r0.s999.name=%00&r0.rr0.apigroups=%22%22,%22%22&op=add-nonresource:999")
	f.Add("%zz&r0.&r.s0.kind=&op=add-rule&op=save")

	f.Fuzz(func(t *testing.T, body string) {
		v, _ := url.ParseQuery(body) // a malformed pair is dropped, as net/http does
		typed, op := form.Parse(v)
		check := func(rules int, rows ...int) {
			if rules > form.MaxRows {
				t.Fatalf("%d rules", rules)
			}
			for _, n := range rows {
				if n > form.MaxRows {
					t.Fatalf("%d rows", n)
				}
			}
		}
		check(len(typed.Rules))
		for _, r := range typed.Rules {
			check(0, len(r.Subjects), len(r.ResourceRules), len(r.NonResourceRules))
		}
		again, _ := form.Parse(form.Values(typed))
		if !reflect.DeepEqual(again, typed) {
			t.Fatalf("posting the form back changes it:\n%+v\n%+v", typed, again)
		}
		edited := form.ApplyOp(typed, op)
		check(len(edited.Rules))
		_ = form.AddedRowKey(edited, op)
		_, errs := Spec(edited)
		for k, msgs := range errs {
			if k == "" || len(msgs) == 0 {
				t.Fatalf("local error without field or message: %q %q", k, msgs)
			}
		}
		for k := range Hints(edited, []string{"workload-low"}) {
			if k == "" {
				t.Fatal("hint without a field")
			}
		}
	})
}
