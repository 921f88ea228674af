package main

// The schema the MutatingAdmissionPolicy plugin applies ApplyConfigurations with.
//
// In kube-apiserver the plugin builds its type converter from the server's own OpenAPI v3
// document: mutating.NewPlugin passes client.Discovery().OpenAPIV3() to
// patch.NewTypeConverterManager, which reads /openapi/v3/apis/<group>/<version> and calls
// managedfields.NewTypeConverter on its components.schemas (k8s.io/apiserver/pkg/admission/
// plugin/policy/mutating/{plugin.go,patch/typeconverter.go}). The fake clientset's discovery
// has no OpenAPI (FakeDiscovery.OpenAPIV3 panics "unimplemented"), and the OpenAPI document of
// Kubernetes 1.36 is generated into k8s.io/kubernetes, which Debian does not package.
//
// client-go carries the same schema in structured-merge-diff form: applyconfiguration-gen
// converts the OpenAPI models of every built-in type (applyconfigurations/internal, reached
// through applyconfigurations.NewTypeConverter). This file writes those types back as OpenAPI
// v3 models (list types, map keys, map types, $refs, the group-version-kind extension) and
// serves them through an openapi.Client, so the real plugin builds its converter the way it
// does in a cluster. TestOpenAPIRoundTrip checks that kube-openapi's conversion of these models
// (schemaconv, what managedfields.NewTypeConverter runs) gives back client-go's schema exactly,
// unions excepted: the OpenAPI v3 path has no unions in the API server either.

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// The names schemaconv gives its two shared types (k8s.io/kube-openapi/pkg/schemaconv/smd.go):
// it adds them to every schema itself, so they are not written as models.
const (
	untypedAtomic  = "__untyped_atomic_"
	untypedDeduced = "__untyped_deduced_"
)

// BuiltinSchema is client-go's structured-merge-diff schema of every built-in type.
func BuiltinSchema() (*smdschema.Schema, error) {
	tv, err := applyconfigurations.NewTypeConverter(Scheme).ObjectToTyped(
		&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}})
	if err != nil {
		return nil, fmt.Errorf("client-go applyconfigurations schema: %w", err)
	}
	return tv.Schema(), nil
}

// OpenAPIModels writes the schema's types as OpenAPI v3 models, each model of a registered kind
// with its x-kubernetes-group-version-kind.
func OpenAPIModels(s *smdschema.Schema) map[string]*spec.Schema {
	models := map[string]*spec.Schema{}
	for _, t := range s.Types {
		if t.Name == untypedAtomic || t.Name == untypedDeduced {
			continue
		}
		m := atomSchema(t.Atom)
		models[t.Name] = &m
	}
	kinds := map[string][]interface{}{}
	for gvk := range Scheme.AllKnownTypes() {
		name, err := Scheme.ToOpenAPIDefinitionName(gvk)
		if err != nil || models[name] == nil {
			continue
		}
		kinds[name] = append(kinds[name], map[string]interface{}{
			"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
	}
	for name, list := range kinds {
		sort.Slice(list, func(i, j int) bool { return fmt.Sprint(list[i]) < fmt.Sprint(list[j]) })
		models[name].AddExtension("x-kubernetes-group-version-kind", list)
	}
	return models
}

// atomSchema is the model of one type: the inverse of schemaconv's parseSchema.
func atomSchema(a smdschema.Atom) spec.Schema {
	var s spec.Schema
	switch {
	case a.Scalar != nil && (a.List != nil || a.Map != nil):
		// Any value (a free-form object's members): a schema without a type, which schemaconv
		// reads as an untyped scalar, a list of untyped atoms and a map of deduced members.
		if a.Map != nil && a.Map.ElementRelationship == smdschema.Separable {
			s.AddExtension("x-kubernetes-map-type", "granular")
		}
	case a.Map != nil:
		s.Type = spec.StringOrArray{"object"}
		s.Properties = map[string]spec.Schema{}
		for _, f := range a.Map.Fields {
			p := refSchema(f.Type)
			p.Default = f.Default
			s.Properties[f.Name] = p
		}
		switch {
		case a.Map.ElementType.NamedType != nil && *a.Map.ElementType.NamedType == untypedDeduced:
			s.AdditionalProperties = &spec.SchemaOrBool{Allows: true}
		case a.Map.ElementType.NamedType != nil || !isEmptyAtom(a.Map.ElementType.Inlined):
			elem := refSchema(a.Map.ElementType)
			s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &elem}
		case len(a.Map.Fields) == 0:
			s.AdditionalProperties = &spec.SchemaOrBool{Allows: false}
		}
		switch a.Map.ElementRelationship {
		case smdschema.Atomic:
			s.AddExtension("x-kubernetes-map-type", "atomic")
		case smdschema.Separable:
			s.AddExtension("x-kubernetes-map-type", "granular")
		}
	case a.List != nil:
		s.Type = spec.StringOrArray{"array"}
		if n := a.List.ElementType.NamedType; n == nil || *n != untypedAtomic {
			elem := refSchema(a.List.ElementType)
			s.Items = &spec.SchemaOrArray{Schema: &elem}
		}
		switch {
		case a.List.ElementRelationship == smdschema.Associative && len(a.List.Keys) > 0:
			s.AddExtension("x-kubernetes-list-type", "map")
			keys := make([]interface{}, len(a.List.Keys))
			for i, k := range a.List.Keys {
				keys[i] = k
			}
			s.AddExtension("x-kubernetes-list-map-keys", keys)
		case a.List.ElementRelationship == smdschema.Associative:
			s.AddExtension("x-kubernetes-list-type", "set")
		default:
			s.AddExtension("x-kubernetes-list-type", "atomic")
		}
	case a.Scalar != nil:
		switch *a.Scalar {
		case smdschema.Numeric:
			s.Type = spec.StringOrArray{"number"}
		case smdschema.String:
			s.Type = spec.StringOrArray{"string"}
		case smdschema.Boolean:
			s.Type = spec.StringOrArray{"boolean"}
		default: // untyped: schemaconv reads "int-or-string" (and any other format) as untyped
			s.Type = spec.StringOrArray{"string"}
			s.Format = "int-or-string"
		}
	}
	return s
}

// refSchema is a field's schema: a $ref in a single-element allOf (how the API server's
// OpenAPI v3 writes them), with a map-type override when the reference carries one.
func refSchema(t smdschema.TypeRef) spec.Schema {
	if t.NamedType == nil {
		s := atomSchema(t.Inlined)
		s.Nullable = t.Nullable
		return s
	}
	var s spec.Schema
	s.AllOf = []spec.Schema{{SchemaProps: spec.SchemaProps{
		Ref: spec.MustCreateRef("#/components/schemas/" + *t.NamedType)}}}
	s.Nullable = t.Nullable
	if t.ElementRelationship != nil {
		switch *t.ElementRelationship {
		case smdschema.Atomic:
			s.AddExtension("x-kubernetes-map-type", "atomic")
		case smdschema.Separable:
			s.AddExtension("x-kubernetes-map-type", "granular")
		}
	}
	return s
}

func isEmptyAtom(a smdschema.Atom) bool { return a.Scalar == nil && a.List == nil && a.Map == nil }

// openAPIClient serves one OpenAPI v3 document, holding every model, for every group-version
// of the scheme and of the custom resources registered (the API server serves one per
// group-version; the models a converter is built from are the same).
//
// Custom resources (PyTorchJob, RayCluster, JobSet) get a model that keeps unknown fields
// (x-kubernetes-preserve-unknown-fields), standing in for the CRD's schema, which the harness
// does not have: in a cluster the CRD's OpenAPI is served and the MAP plugin finds a converter
// for the kind. A JSON Patch mutation never reads the converter (patch/json_patch.go), so for it
// the stand-in is exact; an ApplyConfiguration on a custom resource would merge by this
// schema, not the CRD's.
type openAPIClient struct {
	mu      sync.Mutex
	builtin map[string]*spec.Schema
	err     error
	custom  map[schema.GroupVersionKind]bool
	version int // changes with the custom kinds, and with it each path's URL
	doc     []byte
	docOf   int
}

type openAPIGroupVersion struct {
	client  *openAPIClient
	path    string
	version int
}

func (g openAPIGroupVersion) Schema(contentType string) ([]byte, error) {
	if contentType != runtime.ContentTypeJSON {
		return nil, fmt.Errorf("openapi %s: only %s is served", g.path, runtime.ContentTypeJSON)
	}
	return g.client.document()
}

func (g openAPIGroupVersion) ServerRelativeURL() string {
	return fmt.Sprintf("/openapi/v3/%s?hash=%d", g.path, g.version)
}

// RegisterCustomKind adds a custom resource kind to the served OpenAPI.
func RegisterCustomKind(gvk schema.GroupVersionKind) {
	c := sharedOpenAPI
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.custom[gvk] && !Scheme.Recognizes(gvk) {
		c.custom[gvk] = true
		c.version++
	}
}

func (c *openAPIClient) Paths() (map[string]openapi.GroupVersion, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	paths := map[string]openapi.GroupVersion{}
	add := func(gv schema.GroupVersion) {
		if gv.Version == runtime.APIVersionInternal {
			return
		}
		path := "apis/" + gv.String()
		if gv.Group == "" {
			path = "api/" + gv.Version
		}
		paths[path] = openAPIGroupVersion{client: c, path: path, version: c.version}
	}
	for gvk := range Scheme.AllKnownTypes() {
		add(gvk.GroupVersion())
	}
	for gvk := range c.custom {
		add(gvk.GroupVersion())
	}
	return paths, nil
}

func (c *openAPIClient) document() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.builtin == nil && c.err == nil {
		s, err := BuiltinSchema()
		if err != nil {
			c.err = err
		} else {
			c.builtin = OpenAPIModels(s)
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.doc != nil && c.docOf == c.version {
		return c.doc, nil
	}
	models := make(map[string]*spec.Schema, len(c.builtin)+len(c.custom))
	for name, m := range c.builtin {
		models[name] = m
	}
	for gvk := range c.custom {
		m := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
		m.AddExtension("x-kubernetes-preserve-unknown-fields", true)
		m.AddExtension("x-kubernetes-group-version-kind", []interface{}{map[string]interface{}{
			"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}})
		models["custom."+gvk.Group+"."+gvk.Version+"."+gvk.Kind] = m
	}
	doc := spec3.OpenAPI{Version: "3.0.0", Info: &spec.Info{InfoProps: spec.InfoProps{
		Title: "Kubernetes", Version: "v1.36 (client-go applyconfigurations)"}},
		Components: &spec3.Components{Schemas: models}}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	c.doc, c.docOf = data, c.version
	return data, nil
}

func newOpenAPIClient() *openAPIClient {
	return &openAPIClient{custom: map[schema.GroupVersionKind]bool{}}
}

// Clientset is the fake clientset whose discovery serves the OpenAPI document above.
type Clientset struct {
	*fake.Clientset
	discovery *discoveryWithOpenAPI
}

type discoveryWithOpenAPI struct {
	*fakediscovery.FakeDiscovery
	openapi openapi.Client
}

func (d *discoveryWithOpenAPI) OpenAPIV3() openapi.Client { return d.openapi }

func (c *Clientset) Discovery() discovery.DiscoveryInterface { return c.discovery }

var sharedOpenAPI = newOpenAPIClient()

// NewClientset makes the fake clientset holding the objects.
func NewClientset(objects ...runtime.Object) *Clientset {
	f := fake.NewClientset(objects...)
	return &Clientset{Clientset: f, discovery: &discoveryWithOpenAPI{
		FakeDiscovery: f.Discovery().(*fakediscovery.FakeDiscovery), openapi: sharedOpenAPI}}
}

var _ kubernetes.Interface = &Clientset{}
