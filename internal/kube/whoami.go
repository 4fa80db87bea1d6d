package kube

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// WhoAmI asks the API server who cfg authenticates as (a SelfSubjectReview), so
// the console can name the identity it acts with instead of guessing from the
// kubeconfig (a token says nothing about its user).
func WhoAmI(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("who am I: %w", err)
	}
	return r.Status.UserInfo.Username, nil
}
