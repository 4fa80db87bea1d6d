package edit

// DeleteNotes says, per API kind, what deleting an object of that kind does
// beyond removing it.
func DeleteNotes(kind string) []string {
	switch kind {
	case "CustomResourceDefinition":
		return []string{"The API group's resources stop being served as soon as the deletion starts; the CRD is gone once all its objects are."}
	case "FlowSchema":
		return []string{"Requests it classified are matched by the next FlowSchema in order of matchingPrecedence."}
	case "PriorityLevelConfiguration":
		return []string{"FlowSchemas that name it become dangling (their Dangling condition turns True)."}
	case "ValidatingWebhookConfiguration":
		return []string{"The API server stops calling its webhooks: the requests they checked are admitted without them."}
	case "CertificateSigningRequest":
		return []string{"A certificate already issued from it stays valid until it expires; only the request object goes."}
	case "CSIDriver":
		return []string{"Kubelets fall back to default behaviour for this driver (attach required, no pod info on mount) for volumes mounted from now on."}
	}
	return nil
}
