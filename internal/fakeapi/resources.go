package fakeapi

import (
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CustomResource is a custom resource the server serves as its CRD would
// be: JSON only, its objects stored as unstructured.
type CustomResource struct {
	Group, Version string
	// Resource is the plural name; the singular one is Kind in lower case.
	Resource string
	Kind     string
	// ClusterScoped resources have no namespace; the others do.
	ClusterScoped bool
	ShortNames    []string
	Categories    []string
}

// CAPTFResources are the custom resources New serves by default: CAPTF's
// three kinds with Terraform state and Cluster API's Cluster, as the
// test-bed's CRDs (test/testbed/crds.yaml) define them.
func CAPTFResources() []CustomResource {
	capi := []string{"cluster-api"}
	infra := func(kind string) CustomResource {
		return CustomResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Resource: strings.ToLower(kind) + "s", Kind: kind, Categories: capi}
	}
	return []CustomResource{
		infra("TerraformCluster"), infra("TerraformMachine"), infra("TerraformMachinePool"),
		{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters", Kind: "Cluster", Categories: capi},
	}
}

// resource is one resource the server serves.
type resource struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	// custom resources are JSON only and stored unstructured.
	custom                 bool
	verbs                  []string
	shortNames, categories []string
}

func (r *resource) gvk() schema.GroupVersionKind { return r.gvr.GroupVersion().WithKind(r.kind) }

// crudVerbs are the verbs of every resource but SelfSubjectReview.
var crudVerbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}

// builtins are the built-in resources served, as a v1.34 API server
// describes them.
func builtins() []resource {
	all := []string{"all"}
	return []resource{
		{gvr: corev1.SchemeGroupVersion.WithResource("pods"), kind: "Pod", namespaced: true, shortNames: []string{"po"}, categories: all},
		{gvr: corev1.SchemeGroupVersion.WithResource("secrets"), kind: "Secret", namespaced: true},
		{gvr: corev1.SchemeGroupVersion.WithResource("namespaces"), kind: "Namespace", shortNames: []string{"ns"}},
		{gvr: corev1.SchemeGroupVersion.WithResource("events"), kind: "Event", namespaced: true, shortNames: []string{"ev"}},
		{gvr: coordinationv1.SchemeGroupVersion.WithResource("leases"), kind: "Lease", namespaced: true},
		{gvr: batchv1.SchemeGroupVersion.WithResource("jobs"), kind: "Job", namespaced: true, categories: all},
		{gvr: eventsv1.SchemeGroupVersion.WithResource("events"), kind: "Event", namespaced: true, shortNames: []string{"ev"}},
		{gvr: authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews"), kind: "SelfSubjectReview", verbs: []string{"create"}},
	}
}

func served(custom []CustomResource) []resource {
	out := builtins()
	for i := range out {
		if out[i].verbs == nil {
			out[i].verbs = crudVerbs
		}
	}
	for _, c := range custom {
		out = append(out, resource{
			gvr:  schema.GroupVersionResource{Group: c.Group, Version: c.Version, Resource: c.Resource},
			kind: c.Kind, namespaced: !c.ClusterScoped, custom: true, verbs: crudVerbs,
			shortNames: c.ShortNames, categories: c.Categories,
		})
	}
	return out
}

func (s *Server) find(gvr schema.GroupVersionResource) *resource {
	for i := range s.resources {
		if s.resources[i].gvr == gvr {
			return &s.resources[i]
		}
	}
	return nil
}

// Discovery, unaggregated (the "v1" format every client falls back to).

func (s *Server) groups() *metav1.APIGroupList {
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, r := range s.resources {
		if r.gvr.Group == "" {
			continue
		}
		gv := metav1.GroupVersionForDiscovery{GroupVersion: r.gvr.GroupVersion().String(), Version: r.gvr.Version}
		i := len(list.Groups) - 1
		for i >= 0 && list.Groups[i].Name != r.gvr.Group {
			i--
		}
		switch {
		case i < 0:
			list.Groups = append(list.Groups, metav1.APIGroup{Name: r.gvr.Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
		case !hasVersion(list.Groups[i].Versions, gv):
			list.Groups[i].Versions = append(list.Groups[i].Versions, gv)
		}
	}
	return list
}

func hasVersion(vs []metav1.GroupVersionForDiscovery, v metav1.GroupVersionForDiscovery) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

func (s *Server) group(name string) *metav1.APIGroup {
	for _, g := range s.groups().Groups {
		if g.Name == name {
			g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			return &g
		}
	}
	return nil
}

func (s *Server) resourceList(gv schema.GroupVersion) *metav1.APIResourceList {
	var out []metav1.APIResource
	for _, r := range s.resources {
		if r.gvr.GroupVersion() == gv {
			out = append(out, metav1.APIResource{
				Name: r.gvr.Resource, SingularName: strings.ToLower(r.kind), Namespaced: r.namespaced, Kind: r.kind,
				Verbs: r.verbs, ShortNames: r.shortNames, Categories: r.categories,
			})
		}
	}
	if out == nil {
		return nil
	}
	return &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String(), APIResources: out}
}
