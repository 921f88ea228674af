package main

// Objects as the API server holds them: typed for the built-in kinds (client-go's scheme, the
// external v1 types), unstructured for custom resources (PyTorchJob, RayCluster, JobSet).
//
// The API server admits internal-version objects and converts them to the version a policy or
// webhook asks for (k8s.io/apiserver/pkg/admission/plugin/webhook/generic/conversion.go). The
// internal types live in k8s.io/kubernetes, which Debian does not package, so the harness
// admits the external v1 object itself: the conversion the plugins then make is v1 -> v1.

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Scheme is client-go's: every built-in group and version, no defaulting functions (those are
// in k8s.io/kubernetes/pkg/apis/*/v1, not packaged; see defaults.go for what that means).
var Scheme = scheme.Scheme

var codecs = serializer.NewCodecFactory(Scheme, serializer.EnableStrict)

// ReadDocuments splits a YAML stream (a file of `---` separated documents) into JSON documents,
// skipping empty ones and comment-only ones.
func ReadDocuments(r io.Reader) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out [][]byte
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if t := strings.TrimSpace(string(j)); t == "" || t == "null" {
			continue
		}
		out = append(out, j)
	}
}

// Decode turns a JSON document into the object the API server would hold: the registered Go
// type for built-in kinds (strictly: an unknown field is an error, as kubectl's server-side
// field validation reports it), unstructured otherwise.
func Decode(doc []byte) (runtime.Object, error) {
	var probe struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &probe); err != nil {
		return nil, err
	}
	if probe.APIVersion == "" || probe.Kind == "" {
		return nil, fmt.Errorf("document without apiVersion and kind: %.80s", doc)
	}
	gvk := schema.FromAPIVersionAndKind(probe.APIVersion, probe.Kind)
	if Scheme.Recognizes(gvk) {
		obj, _, err := codecs.UniversalDeserializer().Decode(doc, &gvk, nil)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", probe.APIVersion, probe.Kind, err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return obj, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	return u, nil
}

// ToUnstructured gives the object's JSON form as a map (a typed object as its JSON encoding).
func ToUnstructured(obj runtime.Object) (map[string]interface{}, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy().Object, nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// Mapping is the resource of a kind and whether it is namespaced, as discovery would say.
type Mapping struct {
	Resource   schema.GroupVersionResource
	Namespaced bool
}

// Resources maps the kinds the harness admits to their resources. Built-in kinds come from
// the table below; other kinds (custom resources) take the lower-case plural that `gpuadmit
// render` writes into its webhook rules (render/webhook_configuration.cc plural_resource), and
// are namespaced.
func ResourceFor(gvk schema.GroupVersionKind) Mapping {
	if m, ok := builtinResources[gvk.GroupKind()]; ok {
		return Mapping{gvk.GroupVersion().WithResource(m.resource), m.namespaced}
	}
	return Mapping{gvk.GroupVersion().WithResource(pluralResource(gvk.Kind)), true}
}

var builtinResources = map[schema.GroupKind]struct {
	resource   string
	namespaced bool
}{
	{Group: "", Kind: "Pod"}:                                  {"pods", true},
	{Group: "", Kind: "PodTemplate"}:                          {"podtemplates", true},
	{Group: "", Kind: "ReplicationController"}:                {"replicationcontrollers", true},
	{Group: "", Kind: "ConfigMap"}:                            {"configmaps", true},
	{Group: "", Kind: "Service"}:                              {"services", true},
	{Group: "", Kind: "Namespace"}:                            {"namespaces", false},
	{Group: "apps", Kind: "Deployment"}:                       {"deployments", true},
	{Group: "apps", Kind: "ReplicaSet"}:                       {"replicasets", true},
	{Group: "apps", Kind: "StatefulSet"}:                      {"statefulsets", true},
	{Group: "apps", Kind: "DaemonSet"}:                        {"daemonsets", true},
	{Group: "batch", Kind: "Job"}:                             {"jobs", true},
	{Group: "batch", Kind: "CronJob"}:                         {"cronjobs", true},
	{Group: "resource.k8s.io", Kind: "ResourceClaim"}:         {"resourceclaims", true},
	{Group: "resource.k8s.io", Kind: "ResourceClaimTemplate"}: {"resourceclaimtemplates", true},
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:           {"deviceclasses", false},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:       {"priorityclasses", false},
}

// pluralResource mirrors render/webhook_configuration.cc plural_resource, which names the
// resources of custom workload kinds in the rules `gpuadmit render` prints.
func pluralResource(kind string) string {
	lower := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(lower, "s"), strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "z"),
		strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"):
		return lower + "es"
	case len(lower) >= 2 && lower[len(lower)-1] == 'y' && !strings.ContainsRune("aeiou", rune(lower[len(lower)-2])):
		return lower[:len(lower)-1] + "ies"
	}
	return lower + "s"
}

// RESTMapper knows the kinds of the objects given (and every built-in kind of the table), as
// the API server's discovery-backed mapper does; the policy plugins use it to match
// resources, the Equivalent match policy among them.
func RESTMapper(objects []runtime.Object) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	add := func(gvk schema.GroupVersionKind) {
		r := ResourceFor(gvk)
		scope := meta.RESTScopeRoot
		if r.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		m.AddSpecific(gvk, r.Resource, r.Resource.GroupVersion().WithResource(strings.TrimSuffix(r.Resource.Resource, "s")), scope)
	}
	for gvk := range Scheme.AllKnownTypes() {
		if _, ok := builtinResources[gvk.GroupKind()]; ok && !strings.HasSuffix(gvk.Kind, "List") {
			add(gvk)
		}
	}
	for _, obj := range objects {
		add(obj.GetObjectKind().GroupVersionKind())
	}
	return m
}
