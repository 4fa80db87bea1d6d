package kube

import (
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ReplacedError is DecideCSR's answer when the CSR under the name is no longer
// the object the person reviewed: it was deleted and created again (perhaps
// with another subject) between the page view and the click. Nothing was
// written. It unwraps to the API server's Conflict.
type ReplacedError struct {
	Name    string
	Seen    types.UID                                 // the UID the decision was made on
	Current *certificatesv1.CertificateSigningRequest // the live object now under Name
	Err     error                                     // the API server's refusal
}

func (e *ReplacedError) Error() string {
	return fmt.Sprintf("certificatesigningrequest %q was replaced since it was reviewed (reviewed UID %s, now %s): %v",
		e.Name, e.Seen, e.Current.UID, e.Err)
}

func (e *ReplacedError) Unwrap() error { return e.Err }
