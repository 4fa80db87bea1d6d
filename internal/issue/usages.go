package issue

import (
	"crypto/x509"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// keyUsages and extKeyUsages map spec.usages to X.509 the way the
// kube-controller-manager's signer does (upstream
// pkg/controller/certificates/authority/policies.go, keyUsageDict and
// extKeyUsageDict, used by keyUsagesFromStrings): "signing" and "digital
// signature" are both digitalSignature, "s/mime" and "email protection" are
// both emailProtection.
var keyUsages = map[certificatesv1.KeyUsage]x509.KeyUsage{
	certificatesv1.UsageSigning:           x509.KeyUsageDigitalSignature,
	certificatesv1.UsageDigitalSignature:  x509.KeyUsageDigitalSignature,
	certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment,
	certificatesv1.UsageKeyEncipherment:   x509.KeyUsageKeyEncipherment,
	certificatesv1.UsageKeyAgreement:      x509.KeyUsageKeyAgreement,
	certificatesv1.UsageDataEncipherment:  x509.KeyUsageDataEncipherment,
	certificatesv1.UsageCertSign:          x509.KeyUsageCertSign,
	certificatesv1.UsageCRLSign:           x509.KeyUsageCRLSign,
	certificatesv1.UsageEncipherOnly:      x509.KeyUsageEncipherOnly,
	certificatesv1.UsageDecipherOnly:      x509.KeyUsageDecipherOnly,
}

var extKeyUsages = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
	certificatesv1.UsageAny:             x509.ExtKeyUsageAny,
	certificatesv1.UsageServerAuth:      x509.ExtKeyUsageServerAuth,
	certificatesv1.UsageClientAuth:      x509.ExtKeyUsageClientAuth,
	certificatesv1.UsageCodeSigning:     x509.ExtKeyUsageCodeSigning,
	certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageSMIME:           x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageIPsecEndSystem:  x509.ExtKeyUsageIPSECEndSystem,
	certificatesv1.UsageIPsecTunnel:     x509.ExtKeyUsageIPSECTunnel,
	certificatesv1.UsageIPsecUser:       x509.ExtKeyUsageIPSECUser,
	certificatesv1.UsageTimestamping:    x509.ExtKeyUsageTimeStamping,
	certificatesv1.UsageOCSPSigning:     x509.ExtKeyUsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC:    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certificatesv1.UsageNetscapeSGC:     x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// keyUsageNames name the key usage bits in messages, in bit order.
var keyUsageNames = []struct {
	bit  x509.KeyUsage
	name string
}{
	{x509.KeyUsageDigitalSignature, "digital signature"},
	{x509.KeyUsageContentCommitment, "content commitment"},
	{x509.KeyUsageKeyEncipherment, "key encipherment"},
	{x509.KeyUsageDataEncipherment, "data encipherment"},
	{x509.KeyUsageKeyAgreement, "key agreement"},
	{x509.KeyUsageCertSign, "cert sign"},
	{x509.KeyUsageCRLSign, "crl sign"},
	{x509.KeyUsageEncipherOnly, "encipher only"},
	{x509.KeyUsageDecipherOnly, "decipher only"},
}

// extKeyUsageName names an extended key usage as spec.usages spells it.
func extKeyUsageName(u x509.ExtKeyUsage) string {
	// Several spellings map to one usage (s/mime, email protection): the
	// first in the API's own list order is the name.
	var names []string
	for k, v := range extKeyUsages {
		if v == u {
			names = append(names, string(k))
		}
	}
	if len(names) == 0 {
		return "extended key usage #" + itoa(int(u))
	}
	slices.Sort(names)
	return names[0]
}

func keyUsageText(bits x509.KeyUsage) []string {
	var out []string
	for _, n := range keyUsageNames {
		if bits&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// requested is what spec.usages asks for, as X.509 (keyUsagesFromStrings).
// Usages the API does not know (the API server refuses them on create, so
// only an older or newer server's) come back in unknown.
func requested(usages []certificatesv1.KeyUsage) (ku x509.KeyUsage, eku []x509.ExtKeyUsage, unknown []string) {
	for _, u := range usages {
		if bit, ok := keyUsages[u]; ok {
			ku |= bit
		} else if e, ok := extKeyUsages[u]; ok {
			if !slices.Contains(eku, e) {
				eku = append(eku, e)
			}
		} else {
			unknown = append(unknown, string(u))
		}
	}
	return ku, eku, unknown
}
