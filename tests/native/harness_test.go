package main

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/utils/ptr"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// The OpenAPI models served to the MutatingAdmissionPolicy plugin convert back (through
// schemaconv, what managedfields.NewTypeConverter runs) to client-go's schema, unions aside.
func TestOpenAPIRoundTrip(t *testing.T) {
	want, err := BuiltinSchema()
	if err != nil {
		t.Fatal(err)
	}
	got, err := schemaconv.ToSchemaFromOpenAPI(OpenAPIModels(want), false)
	if err != nil {
		t.Fatal(err)
	}
	normalize := func(s *smdschema.Schema) map[string]smdschema.Atom {
		out := map[string]smdschema.Atom{}
		for _, td := range s.Types {
			a := td.Atom
			if a.Map != nil { // unions dropped, fields by name
				m := &smdschema.Map{Fields: append([]smdschema.StructField(nil), a.Map.Fields...),
					ElementType: a.Map.ElementType, ElementRelationship: a.Map.ElementRelationship}
				sort.Slice(m.Fields, func(i, j int) bool { return m.Fields[i].Name < m.Fields[j].Name })
				a.Map = m
			}
			out[td.Name] = a
		}
		return out
	}
	w, g := normalize(want), normalize(got)
	if len(w) < 500 {
		t.Fatalf("client-go's schema has %d types; expected every built-in type", len(w))
	}
	// schemaconv hard-codes these two by name (kube-openapi pkg/schemaconv/openapi.go), as
	// the API server's converter then has them: the served models carry that form.
	for _, special := range []string{"io.k8s.apimachinery.pkg.runtime.RawExtension", "io.k8s.apimachinery.pkg.api.resource.Quantity"} {
		delete(w, special)
		delete(g, special)
	}
	for name, atom := range w {
		if d := cmp.Diff(atom, g[name], cmpopts.IgnoreUnexported(smdschema.Map{})); d != "" {
			t.Errorf("%s (-client-go +via OpenAPI):\n%s", name, d)
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s: only via OpenAPI", name)
		}
	}
}

func TestDefaultsAsDocumented(t *testing.T) {
	vap := &admissionv1.ValidatingAdmissionPolicy{Spec: admissionv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{}}}}}
	DefaultObject(vap)
	m := vap.Spec.MatchConstraints
	if *vap.Spec.FailurePolicy != admissionv1.Fail || *m.MatchPolicy != admissionv1.Equivalent ||
		m.NamespaceSelector == nil || m.ObjectSelector == nil || *m.ResourceRules[0].Scope != admissionv1.AllScopes {
		t.Errorf("defaulted policy: %+v", vap.Spec)
	}
	set := admissionv1.Ignore
	kept := &admissionv1.MutatingAdmissionPolicy{Spec: admissionv1.MutatingAdmissionPolicySpec{FailurePolicy: &set}}
	DefaultObject(kept)
	if *kept.Spec.FailurePolicy != admissionv1.Ignore || kept.Spec.MatchConstraints != nil {
		t.Errorf("a set value or an absent struct changed: %+v", kept.Spec)
	}
	hook := &admissionv1.MutatingWebhookConfiguration{Webhooks: []admissionv1.MutatingWebhook{{
		ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{}}}}}
	DefaultObject(hook)
	w := hook.Webhooks[0]
	if *w.TimeoutSeconds != 10 || *w.ReinvocationPolicy != admissionv1.NeverReinvocationPolicy ||
		*w.ClientConfig.Service.Port != 443 || *w.FailurePolicy != admissionv1.Fail {
		t.Errorf("defaulted webhook: %+v", w)
	}
}

func TestMutatingPolicyV1beta1ConvertsLosslessly(t *testing.T) {
	in := &admissionv1beta1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1beta1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: admissionv1beta1.MutatingAdmissionPolicySpec{
			ReinvocationPolicy: admissionv1beta1.IfNeededReinvocationPolicy,
			Variables:          []admissionv1beta1.Variable{{Name: "v", Expression: "1"}},
			Mutations: []admissionv1beta1.Mutation{{PatchType: admissionv1beta1.PatchTypeJSONPatch,
				JSONPatch: &admissionv1beta1.JSONPatch{Expression: "[]"}}},
		},
	}
	out, err := MutatingPolicyV1(in)
	if err != nil {
		t.Fatal(err)
	}
	p := out.(*admissionv1.MutatingAdmissionPolicy)
	if p.APIVersion != "admissionregistration.k8s.io/v1" || p.Spec.ReinvocationPolicy != admissionv1.IfNeededReinvocationPolicy ||
		p.Spec.Mutations[0].JSONPatch.Expression != "[]" || p.Spec.Variables[0].Name != "v" {
		t.Errorf("converted: %+v", p)
	}
}

func TestLoadNativeRefusesWhatTheAPIServerRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"binding without actions": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: b}\n",
		"map without reinvocation": "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata: {name: m}\n" +
			"spec: {matchConstraints: {resourceRules: []}, mutations: [{patchType: JSONPatch, jsonPatch: {expression: '[]'}}]}\n",
		"unknown field": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: v}\nspec: {validationz: []}\n",
	} {
		if _, err := LoadNative([]byte(doc)); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func pod(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: containers}}
}

// Lists compare as Kubernetes compares them: containers and env by name, tolerations in order;
// quantities by value.
func TestDiffComparesAsKubernetes(t *testing.T) {
	a, b := corev1.Container{Name: "a", Image: "x"}, corev1.Container{Name: "b", Image: "y",
		Env: []corev1.EnvVar{{Name: "E", Value: "1"}, {Name: "F", Value: "2"}}}
	bEnvSwapped := b
	bEnvSwapped.Env = []corev1.EnvVar{b.Env[1], b.Env[0]}
	if d, err := Diff(pod(a, b), pod(bEnvSwapped, a)); err != nil || len(d) != 0 {
		t.Errorf("containers and env reordered: %v %v", d, err)
	}
	one := pod(corev1.Container{Name: "a", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1")}}})
	thousand := pod(corev1.Container{Name: "a", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1000m")}}})
	if d, err := Diff(one, thousand); err != nil || len(d) != 0 {
		t.Errorf("1 and 1000m: %v %v", d, err)
	}
	t1, t2 := pod(a), pod(a)
	t1.Spec.Tolerations = []corev1.Toleration{{Key: "x", Operator: "Exists"}, {Key: "y", Operator: "Exists"}}
	t2.Spec.Tolerations = []corev1.Toleration{t1.Spec.Tolerations[1], t1.Spec.Tolerations[0]}
	if d, err := Diff(t1, t2); err != nil || len(d) == 0 {
		t.Errorf("tolerations (atomic) reordered compare equal: %v %v", d, err)
	}
	changed := pod(corev1.Container{Name: "a", Image: "z"})
	if d, _ := Diff(pod(a), changed); !reflect.DeepEqual(d, []string{`changed .spec.containers[name="a"].image`}) {
		t.Errorf("image change: %v", d)
	}
}

func TestGeneratorIsSeeded(t *testing.T) {
	facts, err := ReadPolicyFacts("../cases/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	draw := func(seed int64) []string {
		g := NewGenerator(seed, facts)
		var out []string
		for i := 0; i < 300; i++ {
			r := g.Next()
			data, err := json.Marshal(r.Object)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(r.Operation)+string(data))
		}
		return out
	}
	first, again, other := draw(7), draw(7), draw(8)
	if !reflect.DeepEqual(first, again) {
		t.Error("one seed, two sequences")
	}
	if reflect.DeepEqual(first, other) {
		t.Error("two seeds, one sequence")
	}
	kinds := map[string]bool{}
	for _, s := range first {
		for _, k := range []string{`"kind":"Pod"`, `"kind":"Deployment"`, `"kind":"Job"`, `"kind":"CronJob"`,
			`"kind":"StatefulSet"`, `"nvidia.com/mig-`, `"nvidia.com/gpu.shared"`, `"restartPolicy":"Always"`,
			`"resourceClaimTemplateName"`, `"nodeSelectorTerms"`, `"priorityClassName"`, "UPDATE",
			`"kind":"ResourceClaim"`, `"kind":"ResourceClaimTemplate"`, `"allocationMode":"All"`, `"firstAvailable"`} {
			if strings.Contains(s, k) {
				kinds[k] = true
			}
		}
	}
	if len(kinds) != 16 {
		t.Errorf("300 objects cover only %v", kinds)
	}
}

func TestFeatureTableAsRendered(t *testing.T) {
	data := []byte(`{"rules":[{"id":"GPU001","native":"yes","category":"correctness","fallback":false,"why":"w"},
	  {"id":"GPU003","native":"yes","category":"security","fallback":true,"why":"w"}],
	 "mutations":[{"name":"tolerations","native":"yes","why":"w","writes":["spec.tolerations"]}],
	 "kinds":[{"group":"","kind":"Pod"},{"group":"apps","kind":"Deployment"},
	   {"group":"resource.k8s.io","kind":"ResourceClaim","validatedOnly":true}],"not_native_kinds":[]}`)
	full, err := ParseFeatureTable(data, "full")
	if err != nil {
		t.Fatal(err)
	}
	if f := full.feature("GPU001"); f.Native != "yes" || !f.covers("Deployment.apps") || f.covers("PyTorchJob.kubeflow.org") {
		t.Errorf("full: %+v", f)
	}
	// A claim is judged by the rules, never mutated.
	if !full.feature("GPU003").covers("ResourceClaim.resource.k8s.io") || full.feature("tolerations").covers("ResourceClaim.resource.k8s.io") ||
		!full.feature("tolerations").covers("Pod") {
		t.Errorf("validatedOnly: %+v", full.Features)
	}
	fallback, err := ParseFeatureTable(data, "fallback")
	if err != nil {
		t.Fatal(err)
	}
	if fallback.feature("GPU001").Native != "no" || fallback.feature("GPU003").Native != "yes" || fallback.feature("tolerations").Native != "no" {
		t.Errorf("fallback: %+v", fallback.Features)
	}
	if _, err := ParseFeatureTable([]byte(`{"rules":[{"id":"GPU001","native":"yes","extra":1}]}`), "full"); err == nil {
		t.Error("an unknown member was accepted")
	}
}

func TestSidesReadRuleIds(t *testing.T) {
	w := WebhookSide(Result{Err: errString(`admission webhook "mutate.gpuadmit.io" denied the request: gpuadmit denied Pod ns/p: ` +
		`GPU001: container a: nvidia.com/gpu request 1 ≠ limit 2; set both to the same whole number; GPU003: class t4 is not allowed`),
		Warnings:    []string{"GPU014: fragmentation"},
		Annotations: map[string]string{"mutate.gpuadmit.io/mutations": "tolerations,class"}})
	if !reflect.DeepEqual(w.DenyRules, []string{"GPU001", "GPU003"}) || !reflect.DeepEqual(w.WarnRules, []string{"GPU014"}) ||
		!reflect.DeepEqual(w.Mutations, []string{"class", "tolerations"}) {
		t.Errorf("webhook side: %+v", w)
	}
	n := NativeSide(Result{Err: errString("denied"), AnnotationCalls: [][2]string{
		{"validation.policy.admission.k8s.io/validation_failure", `[{"message":"GPU005: too many","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Deny","Audit"]}]`},
		{"validation.policy.admission.k8s.io/validation_failure", `[{"message":"GPU002: fraction","policy":"p","binding":"b","expressionIndex":1,"validationActions":["Deny","Audit"]}]`},
	}, Warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'p' with binding 'w': GPU014: fragmentation"}})
	if !reflect.DeepEqual(n.DenyRules, []string{"GPU002", "GPU005"}) || !reflect.DeepEqual(n.WarnRules, []string{"GPU014"}) {
		t.Errorf("native side: %+v", n)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// Two mutating policies where the second's change matters to the first: the API server's
// reinvocation (IfNeeded) runs the first again, in either order of the two. (Had a-copies-b
// been skipped by matchConditions on the first pass, it would not run again: the dispatcher
// records a policy for reinvocation only after its match conditions held,
// k8s.io/apiserver/pkg/admission/plugin/policy/mutating/dispatcher.go.)
func TestEnvironmentReinvokesMutatingPolicies(t *testing.T) {
	set, err := LoadNative([]byte(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: a-copies-b}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  reinvocationPolicy: IfNeeded
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >-
        has(object.metadata.labels) && 'b' in object.metadata.labels ?
          Object{metadata: Object.metadata{labels: {'a': object.metadata.labels['b']}}} : Object{}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: a-copies-b}
spec: {policyName: a-copies-b}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: b-sets-b}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {'b': 'x'}}]"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: b-sets-b}
spec: {policyName: b-sets-b}
`))
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnvironment(append(set.Objects(), Namespace("ns", nil)), PluginOrder)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	r := env.Admit(context.Background(), Request{Object: pod(corev1.Container{Name: "a", Image: "x"}), Operation: admission.Create})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if labels := r.Object.(*corev1.Pod).Labels; labels["a"] != "x" || labels["b"] != "x" {
		t.Errorf("labels %v, want a=x b=x", labels)
	}
}

func TestCostPodHasTheContainers(t *testing.T) {
	p := CostPod(100)
	if len(p.Spec.Containers) != 100 {
		t.Fatalf("%d containers", len(p.Spec.Containers))
	}
	var obj runtime.Object = p
	if _, err := newCostInput(obj); err != nil {
		t.Fatal(err)
	}
	_ = ptr.To(1)
}

func TestPluralResourceAsRender(t *testing.T) {
	// render/webhook_configuration.cc plural_resource, on the kinds the golden cases admit.
	for kind, want := range map[string]string{"PyTorchJob": "pytorchjobs", "RayCluster": "rayclusters",
		"JobSet": "jobsets", "Policy": "policies", "Ingress": "ingresses", "Mesh": "meshes", "Gateway": "gateways"} {
		if got := pluralResource(kind); got != want {
			t.Errorf("%s: %s, want %s", kind, got, want)
		}
	}
}
