package kube

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIServerInstance is one kube-apiserver instance behind the "kubernetes"
// Service, with functions that open its own /metrics and priority-level dump
// (as APIServerMetrics and APIServerPriorityLevelDump do through the
// kubeconfig's server, which lands on any instance).
type APIServerInstance struct {
	Address string // IP:port, as listed in the default/kubernetes EndpointSlice
	Metrics func(ctx context.Context) (io.ReadCloser, error)
	Dump    func(ctx context.Context) (io.ReadCloser, error)
}

// APIServerServerName is the name every instance's serving certificate holds
// (kube-apiserver adds the Service's names to its self-signed certificate, and
// kubeadm and the devcluster to theirs): the instances are dialled by IP and
// verified under this name, with the kubeconfig's CA.
const APIServerServerName = "kubernetes.default.svc"

// instanceDialTimeout bounds the TCP connect to one instance: from outside
// the cluster the instances' addresses are often unroutable, and a connect
// that hangs until the scrape's deadline would hold every scrape that long.
const instanceDialTimeout = 2 * time.Second

// APIServerInstances returns a function that lists the instances in the
// default/kubernetes EndpointSlices (the API server's endpoint reconciler
// keeps every live instance there) and gives each its own client: the
// kubeconfig's credentials and CA, the instance's address, ServerName
// APIServerServerName. It lists on every call instead of watching: the
// sampler calls it once per scrape, only while someone looks, so an idle
// console keeps no watch open, and a new or gone instance shows within one
// scrape. Clients are kept per address while the address is listed.
func APIServerInstances(cfg *rest.Config) (func(ctx context.Context) ([]APIServerInstance, error), error) {
	cs, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("client for the kubernetes EndpointSlices: %w", err)
	}
	var mu sync.Mutex
	clients := map[string]APIServerInstance{}
	return func(ctx context.Context) ([]APIServerInstance, error) {
		list, err := cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=kubernetes",
		})
		if err != nil {
			return nil, err
		}
		addrs := instanceAddresses(list.Items)
		mu.Lock()
		defer mu.Unlock()
		out := make([]APIServerInstance, 0, len(addrs))
		for _, a := range addrs {
			inst, ok := clients[a]
			if !ok {
				if inst, err = instanceClient(cfg, a); err != nil {
					return nil, err
				}
				clients[a] = inst
			}
			out = append(out, inst)
		}
		for a := range clients {
			if !slices.Contains(addrs, a) {
				delete(clients, a)
			}
		}
		return out, nil
	}, nil
}

// instanceAddresses is every IP:port the slices list for the https port (or
// their only port), sorted; endpoints marked not ready are left out, as
// clients of the Service leave them out.
func instanceAddresses(items []discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range items {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		port := slicePort(s.Ports)
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, ip := range ep.Addresses {
				a := net.JoinHostPort(ip, strconv.Itoa(int(port)))
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func slicePort(ports []discoveryv1.EndpointPort) int32 {
	for _, p := range ports {
		if p.Name != nil && *p.Name == "https" && p.Port != nil {
			return *p.Port
		}
	}
	if len(ports) == 1 && ports[0].Port != nil {
		return *ports[0].Port
	}
	return 0
}

func instanceClient(cfg *rest.Config, addr string) (APIServerInstance, error) {
	c := rest.CopyConfig(cfg)
	c.Host = "https://" + addr
	c.TLSClientConfig.ServerName = APIServerServerName
	dialer := &net.Dialer{Timeout: instanceDialTimeout, KeepAlive: 30 * time.Second}
	c.Dial = dialer.DialContext
	metrics, err := apiServerGet(c, APIServerMetricsPath, metricsAccept)
	if err != nil {
		return APIServerInstance{}, err
	}
	dump, err := apiServerGet(c, APIServerPriorityLevelDumpPath, "text/plain")
	if err != nil {
		return APIServerInstance{}, err
	}
	return APIServerInstance{Address: addr, Metrics: metrics, Dump: dump}, nil
}
