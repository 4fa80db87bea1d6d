package page

import (
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func TestSetYAMLInlineOrOnDemand(t *testing.T) {
	small := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "small"}}
	var p model.DetailPage
	if err := SetYAML(&p, kube.CSRs, "small", small); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.YAML, "name: small") || p.YAMLHref != "" || p.YAMLNote != "" {
		t.Errorf("a small object is inline without a note: %+v", p)
	}

	big := small.DeepCopy()
	big.Name = "big one"
	big.Spec.Request = []byte(strings.Repeat("x", yamlInlineMax))
	big.Annotations = map[string]string{kube.LastAppliedAnnotation: kube.StrippedPrefix + "12 bytes)"}
	p = model.DetailPage{}
	if err := SetYAML(&p, kube.CSRs, big.Name, big); err != nil {
		t.Fatal(err)
	}
	if p.YAML != "" || p.YAMLHref != "/csrs/big%20one/yaml" || !strings.HasSuffix(p.YAMLSize, "KiB object") {
		t.Errorf("a large object loads on demand: href %q size %q", p.YAMLHref, p.YAMLSize)
	}
	if note := YAMLNote("a: " + kube.StrippedPrefix); !strings.Contains(note, "last-applied-configuration") {
		t.Errorf("the note names what the cache left out: %q", note)
	}
}
