package apf

import flowcontrolv1 "k8s.io/api/flowcontrol/v1"

func without(fss []*flowcontrolv1.FlowSchema, name string) []*flowcontrolv1.FlowSchema {
	var out []*flowcontrolv1.FlowSchema
	for _, fs := range fss {
		if fs.Name != name {
			out = append(out, fs)
		}
	}
	return out
}

// user is an authenticated request's identity.
func user(name string, groups ...string) Request {
	return Request{User: name, Groups: WithAuthGroup(name, groups)}
}

func serviceAccount(ns, name string) Request {
	u, g := ServiceAccountUser(ns, name)
	return Request{User: u, Groups: WithAuthGroup(u, g)}
}

func (r Request) res(verb, group, resource, sub, ns string) Request {
	r.IsResourceRequest, r.Verb, r.APIGroup, r.Resource, r.Subresource, r.Namespace = true, verb, group, resource, sub, ns
	return r
}

func (r Request) url(verb, path string) Request {
	r.Verb, r.Path = verb, path
	return r
}
