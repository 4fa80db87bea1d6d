package csrpolicy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCompareWorstShapes runs the kubelet-serving policy over what the
// agreement page compares at most (2,000 decided requests) in the shapes large
// clusters have at their worst: 200-SAN requests (the policy's SAN rules walk
// every one against the Node's 200 addresses), 253-character names, and a
// kubelet retry storm (one node asking again and again).
func BenchmarkCompareWorstShapes(b *testing.B) {
	pr, err := Compile(Policy{Name: "kubelet-serving", Signers: []string{"kubernetes.io/kubelet-serving"},
		Expression: strings.ReplaceAll(kubeletServing, "size(request.dnsNames) <= 1 &&", ""), Decision: Approve, Reason: "R"})
	if err != nil {
		b.Fatal(err)
	}
	past := make([]Past, 0, 2000)
	for n := range 2000 {
		i := good()
		switch n % 4 {
		case 0: // 200 SANs, every one the Node's
			i.dns = nil
			for s := range 200 {
				i.dns = append(i.dns, fmt.Sprintf("san-%03d.k8s.example.com", s))
			}
			i.node.Addresses = append(append([]string{}, i.dns...), i.ips...)
		case 1: // a 253-character node name
			long := strings.Repeat("n", 253-len("system:node:"))
			i.user, i.cn = "system:node:"+long, "system:node:"+long
		case 2: // the storm: the same node, again
		case 3: // no Node
			i.node = nil
		}
		past = append(past, Past{Input: i.build(), Decision: Approve})
	}
	b.ReportAllocs()
	for b.Loop() {
		a := pr.Compare(context.Background(), past)
		if a.Checked != 2000 || a.Errors != 0 {
			b.Fatalf("%+v", a)
		}
	}
}
