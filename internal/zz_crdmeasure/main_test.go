package crdmeasure

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

func procCPU(pid int) float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	f := strings.Fields(string(b)[strings.LastIndex(string(b), ")")+2:])
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

func TestMeasure(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(os.Getenv("APIPID"))
	for _, mode := range []string{"json", "proto", "json", "proto"} {
		c := *cfg
		if mode == "proto" {
			c.ContentType = "application/vnd.kubernetes.protobuf"
			c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		}
		c.QPS, c.Burst = 1000, 1000
		ext := apiextensionsclient.NewForConfigOrDie(&c)
		a0 := procCPU(pid)
		s0 := procCPU(os.Getpid())
		t0 := time.Now()
		n := 0
		for i := 0; i < 5; i++ {
			opts := metav1.ListOptions{Limit: 10, ResourceVersion: os.Getenv("RV")}
			for {
				l, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(context.Background(), opts)
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
		ct := ""; if r := ext.ApiextensionsV1().RESTClient().Get().Resource("customresourcedefinitions").Param("limit","1").Do(context.Background()); true { r.ContentType(&ct) }; t.Logf("%s %s: 5 lists (%d items): apiserver %.2f CPU-s, client %.2f CPU-s, wall %v", mode, ct, n, procCPU(pid)-a0, procCPU(os.Getpid())-s0, time.Since(t0))
	}
}
