package handlers

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func (f fixtureCluster) MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	out := make([]*admissionregistrationv1.MutatingWebhookConfiguration, 0, len(f.mutating))
	for _, c := range f.mutating {
		out = append(out, c)
	}
	return out, nil
}

func (f fixtureCluster) MutatingWebhook(name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	if c, ok := f.mutating[name]; ok {
		return c, nil
	}
	return nil, notFound("mutatingwebhookconfigurations", name)
}
