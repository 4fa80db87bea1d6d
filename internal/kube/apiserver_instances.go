package kube

import (
	"context"
	"errors"
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

// instanceDialTimeout bounds the TCP connect to one instance, and is shorter
// than a scrape's deadline so an unroutable address ends in a dial error,
// which the sampler tells from a slow instance (apfload.cannotReach): from outside
// the cluster the instances' addresses are often unroutable, and a connect
// that hangs until the scrape's deadline would hold every scrape that long.
const instanceDialTimeout = 2 * time.Second

// ErrInstancesInsecure is what the list of APIServerInstances answers,
// without asking the API server anything, when the kubeconfig skips TLS
// verification: the console then reads only the kubeconfig's server, which
// its operator chose.
var ErrInstancesInsecure = errors.New("the kubeconfig skips TLS verification (insecure-skip-tls-verify), so the console reads the API server only at the kubeconfig's server: " +
	"at an address from the default/kubernetes EndpointSlice nothing would prove that the listener is an API server before the console sent it its credentials")

// kubernetesSlice is the name of the API server's own EndpointSlice in
// default, after the Service it lists the instances of.
const kubernetesSlice = "kubernetes"

// APIServerInstances returns a function that lists the instances in the API
// server's own default/kubernetes EndpointSlice (its endpoint reconciler
// keeps every live instance there) and gives each its own client: the
// kubeconfig's credentials and CA, the instance's address, ServerName
// APIServerServerName. It lists on every call instead of watching: the
// sampler calls it once per scrape, only while someone looks, so an idle
// console keeps no watch open, and a new or gone instance shows within one
// scrape. Clients are kept per address while the address is listed.
//
// Each instance is sent the console's credentials, so only the slice the
// API server writes is read (apiServerSlice), never any slice that merely
// carries the Service's label (anyone who may create EndpointSlices in
// default can label one so); and with a kubeconfig that skips TLS
// verification the list is ErrInstancesInsecure.
func APIServerInstances(cfg *rest.Config) (func(ctx context.Context) ([]APIServerInstance, error), error) {
	if cfg.Insecure {
		return func(context.Context) ([]APIServerInstance, error) { return nil, ErrInstancesInsecure }, nil
	}
	cs, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("client for the kubernetes EndpointSlices: %w", err)
	}
	var mu sync.Mutex
	clients := map[string]APIServerInstance{}
	return func(ctx context.Context) ([]APIServerInstance, error) {
		// A list with the name as field selector, not a get: the console's
		// ClusterRole lets it list EndpointSlices (the insight pages), and
		// apiServerSlice checks the name again.
		list, err := cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
			FieldSelector: "metadata.name=" + kubernetesSlice,
		})
		if err != nil {
			return nil, err
		}
		slice, err := apiServerSlice(list.Items)
		if err != nil {
			return nil, err
		}
		addrs := instanceAddresses([]discoveryv1.EndpointSlice{slice})
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

// apiServerSlice is the API server's own EndpointSlice among items: named
// "kubernetes" (in default: the caller lists there), labelled for the
// Service and by no controller. The API server's endpoint reconciler writes
// exactly that: k8s.io/kubernetes pkg/controlplane/reconcilers/endpointsadapter.go
// (endpointSliceFromEndpoints: Name = the Endpoints' name, Labels = only
// kubernetes.io/service-name; EnsureEndpointSliceFromEndpoints puts the
// labels back when they differ), and marks the Endpoints skip-mirror so that
// no controller makes another. A slice under another name is anyone's, and a
// managed-by label means a controller or a person made it, not the API server.
func apiServerSlice(items []discoveryv1.EndpointSlice) (discoveryv1.EndpointSlice, error) {
	for _, s := range items {
		if s.Name != kubernetesSlice || s.Namespace != metav1.NamespaceDefault {
			continue
		}
		if s.Labels[discoveryv1.LabelServiceName] != kubernetesSlice {
			return s, fmt.Errorf("the EndpointSlice default/%s is not labelled %s=%s, as the API server labels its own", kubernetesSlice, discoveryv1.LabelServiceName, kubernetesSlice)
		}
		if by, ok := s.Labels[discoveryv1.LabelManagedBy]; ok {
			return s, fmt.Errorf("the EndpointSlice default/%s is managed by %q: the API server's own carries no %s label", kubernetesSlice, by, discoveryv1.LabelManagedBy)
		}
		return s, nil
	}
	return discoveryv1.EndpointSlice{}, fmt.Errorf("there is no EndpointSlice default/%s (the API server's endpoint reconciler writes it)", kubernetesSlice)
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
