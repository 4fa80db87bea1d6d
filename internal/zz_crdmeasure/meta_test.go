package crdmeasure

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"
)

func TestMeta(t *testing.T) {
	cfg, _ := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	cfg.QPS, cfg.Burst = 1000, 1000
	pid, _ := strconv.Atoi(os.Getenv("APIPID"))
	mc := metadata.NewForConfigOrDie(cfg)
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for r := 0; r < 2; r++ {
		a0 := procCPU(pid)
		t0 := time.Now()
		n := 0
		for i := 0; i < 5; i++ {
			opts := metav1.ListOptions{Limit: 10}
			for {
				l, err := mc.Resource(gvr).List(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				n += len(l.Items)
				if l.Continue == "" {
					break
				}
				opts.Continue = l.Continue
			}
		}
		t.Logf("metadata: 5 lists (%d): apiserver %.2f CPU-s wall %v", n, procCPU(pid)-a0, time.Since(t0))
	}
}
