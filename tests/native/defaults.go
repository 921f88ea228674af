package main

// Defaulting of admission configuration objects as the API server applies it when they are
// created. The defaulting functions live in k8s.io/kubernetes/pkg/apis/admissionregistration/
// {v1,v1beta1}/defaults.go, which Debian does not package; this file applies the same defaults,
// each one documented on its field in k8s.io/api/admissionregistration/v1/types.go (0.36):
//
//   ValidatingAdmissionPolicySpec.failurePolicy        "Defaults to Fail."
//   MutatingAdmissionPolicySpec.failurePolicy          "Defaults to Fail."
//   MatchResources.matchPolicy                         `Defaults to "Equivalent"`
//   MatchResources.namespaceSelector / objectSelector  "Default to the empty LabelSelector,
//                                                       which matches everything."
//   NamedRuleWithOperations / RuleWithOperations scope `Default is "*".`
//   {Mutating,Validating}Webhook.failurePolicy         "Defaults to Fail."
//   .matchPolicy                                       `Defaults to "Equivalent"`
//   .namespaceSelector / .objectSelector               the empty LabelSelector
//   .timeoutSeconds                                    "Default to 10 seconds."
//   MutatingWebhook.reinvocationPolicy                 `Defaults to "Never".`
//   ServiceReference.port                              "Default to 443"
//
// (SetDefaults_ValidatingAdmissionPolicySpec, SetDefaults_MatchResources, SetDefaults_Rule,
// SetDefaults_ValidatingWebhook, SetDefaults_MutatingWebhook, SetDefaults_ServiceReference and
// SetDefaults_MutatingAdmissionPolicySpec in kubernetes/kubernetes pkg/apis/admissionregistration.)
// The defaults matter to the plugins: a nil namespaceSelector matches no namespace
// (metav1.LabelSelectorAsSelector(nil) is labels.Nothing()), a nil matchPolicy is not
// Equivalent. Fields the API requires (a binding's validationActions, a mutating policy's
// reinvocationPolicy) have no default: Validate reports them missing, as the API server's
// validation would refuse the object.

import (
	"encoding/json"
	"fmt"
	"reflect"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func defaultMatchResources(m *admissionv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(admissionv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		defaultScope(&m.ResourceRules[i].Scope)
	}
	for i := range m.ExcludeResourceRules {
		defaultScope(&m.ExcludeResourceRules[i].Scope)
	}
}

func defaultScope(s **admissionv1.ScopeType) {
	if *s == nil {
		*s = ptr.To(admissionv1.AllScopes)
	}
}

func defaultFailurePolicy(f **admissionv1.FailurePolicyType) {
	if *f == nil {
		*f = ptr.To(admissionv1.Fail)
	}
}

// DefaultObject applies the API server's defaults to an admission configuration object in
// place; other objects are left alone.
func DefaultObject(obj runtime.Object) {
	switch o := obj.(type) {
	case *admissionv1.ValidatingAdmissionPolicy:
		defaultFailurePolicy(&o.Spec.FailurePolicy)
		defaultMatchResources(o.Spec.MatchConstraints)
	case *admissionv1.ValidatingAdmissionPolicyBinding:
		defaultMatchResources(o.Spec.MatchResources)
	case *admissionv1.MutatingAdmissionPolicy:
		defaultFailurePolicy(&o.Spec.FailurePolicy)
		defaultMatchResources(o.Spec.MatchConstraints)
	case *admissionv1.MutatingAdmissionPolicyBinding:
		defaultMatchResources(o.Spec.MatchResources)
	case *admissionv1.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			w := &o.Webhooks[i]
			defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector,
				&w.TimeoutSeconds, w.Rules, &w.ClientConfig)
		}
	case *admissionv1.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			w := &o.Webhooks[i]
			defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector,
				&w.TimeoutSeconds, w.Rules, &w.ClientConfig)
			if w.ReinvocationPolicy == nil {
				w.ReinvocationPolicy = ptr.To(admissionv1.NeverReinvocationPolicy)
			}
		}
	}
}

func defaultWebhook(failure **admissionv1.FailurePolicyType, match **admissionv1.MatchPolicyType,
	ns, object **metav1.LabelSelector, timeout **int32, rules []admissionv1.RuleWithOperations,
	client *admissionv1.WebhookClientConfig) {
	defaultFailurePolicy(failure)
	if *match == nil {
		*match = ptr.To(admissionv1.Equivalent)
	}
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *object == nil {
		*object = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptr.To[int32](10)
	}
	for i := range rules {
		defaultScope(&rules[i].Scope)
	}
	if client.Service != nil && client.Service.Port == nil {
		client.Service.Port = ptr.To[int32](443)
	}
}

// MutatingPolicyV1 turns a v1beta1 MutatingAdmissionPolicy or binding (Kubernetes 1.34-1.35,
// `gpuadmit render --native-api v1beta1`) into the v1 object the plugin watches. The API server
// stores one internal type and converts field by field (zz_generated.conversion.go); v1beta1 and
// v1 have the same fields, so the conversion is a JSON round trip, checked to lose nothing: the
// v1 object converted back must equal the v1beta1 one.
func MutatingPolicyV1(obj runtime.Object) (runtime.Object, error) {
	var out runtime.Object
	switch obj.(type) {
	case *admissionv1beta1.MutatingAdmissionPolicy:
		out = &admissionv1.MutatingAdmissionPolicy{}
	case *admissionv1beta1.MutatingAdmissionPolicyBinding:
		out = &admissionv1.MutatingAdmissionPolicyBinding{}
	default:
		return obj, nil
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind(
		obj.GetObjectKind().GroupVersionKind().Kind))
	back := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	data, err = json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, back); err != nil {
		return nil, err
	}
	back.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if !reflect.DeepEqual(back, obj) {
		return nil, fmt.Errorf("v1beta1 -> v1 conversion of %T loses fields", obj)
	}
	return out, nil
}

// Validate reports what the API server's validation of an admission configuration object
// would refuse and the plugins would not notice: the fields the API requires. (The expressions
// are compiled, with the environment the API server validates them in, by CompileCheck.)
func Validate(obj runtime.Object) []string {
	var errs []string
	need := func(ok bool, what string) {
		if !ok {
			errs = append(errs, what)
		}
	}
	switch o := obj.(type) {
	case *admissionv1.ValidatingAdmissionPolicy:
		need(o.Spec.MatchConstraints != nil, "spec.matchConstraints: Required value")
		need(len(o.Spec.Validations)+len(o.Spec.AuditAnnotations) > 0,
			"spec.validations: Required value (validations or auditAnnotations)")
	case *admissionv1.ValidatingAdmissionPolicyBinding:
		need(o.Spec.PolicyName != "", "spec.policyName: Required value")
		need(len(o.Spec.ValidationActions) > 0, "spec.validationActions: Required value")
	case *admissionv1.MutatingAdmissionPolicy:
		need(o.Spec.MatchConstraints != nil, "spec.matchConstraints: Required value")
		need(len(o.Spec.Mutations) > 0, "spec.mutations: Required value")
		need(o.Spec.ReinvocationPolicy == admissionv1.NeverReinvocationPolicy ||
			o.Spec.ReinvocationPolicy == admissionv1.IfNeededReinvocationPolicy,
			"spec.reinvocationPolicy: Required value (Never or IfNeeded)")
		for i, m := range o.Spec.Mutations {
			ok := (m.PatchType == admissionv1.PatchTypeJSONPatch && m.JSONPatch != nil && m.ApplyConfiguration == nil) ||
				(m.PatchType == admissionv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil && m.JSONPatch == nil)
			need(ok, fmt.Sprintf("spec.mutations[%d]: patchType must name the one patch given", i))
		}
	case *admissionv1.MutatingAdmissionPolicyBinding:
		need(o.Spec.PolicyName != "", "spec.policyName: Required value")
	}
	return errs
}
