package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"strconv"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const benchSigner = "example.com/clusterdesk-bench"

// createCSRs makes n pending CSRs (never approved, so no signer touches them).
func createCSRs(ctx context.Context, cs kubernetes.Interface, prefix string, n int) ([]string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%02d", prefix, i)
		// A subject of its own: identical requests would be one storm, whose
		// live event is the group's row, not one row per written CSR.
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
		if err != nil {
			return names, err
		}
		req := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
		_, err = cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/created-by": "clusterdesk-bench"}},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request: req, SignerName: benchSigner,
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return names, err
		}
		names = append(names, name)
	}
	return names, nil
}

func deleteCSRs(cs kubernetes.Interface, names []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range names {
		_ = cs.CertificatesV1().CertificateSigningRequests().Delete(ctx, n, metav1.DeleteOptions{})
	}
}

// drive patches an annotation of the CSRs in turn, rate times a second for d,
// recording each write on the board just before it is sent. A CSR is written
// again only len(names)/rate seconds later, so an event for its row answers
// exactly one write.
func drive(ctx context.Context, cs kubernetes.Interface, b *board, names []string, seq *int64, rate int, d time.Duration) (int, error) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(d)
	n := 0
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-tick.C:
		}
		slot := n % len(names)
		*seq++
		patch := `{"metadata":{"annotations":{"` + seqAnnotation + `":"` + strconv.FormatInt(*seq, 10) + `"}}}`
		b.add(&write{seq: *seq, at: time.Now(), slot: slot})
		if _, err := cs.CertificatesV1().CertificateSigningRequests().Patch(ctx, names[slot], types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
