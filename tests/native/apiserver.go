package main

// The admission side of an API server: Kubernetes' own admission plugins, built and chained
// as kube-apiserver builds them, over a fake clientset that holds the namespaces and the
// admission configuration objects.
//
// Plugins: MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy,
// ValidatingAdmissionWebhook, in kube-apiserver's order (RecommendedPluginOrder in
// k8s.io/apiserver/pkg/server/options/admission.go, AllOrderedPlugins in
// k8s.io/kubernetes/pkg/kubeapiserver/options/plugins.go). The chain is
// admission.Plugins.NewFromPlugins, the API server's own constructor: it initializes each
// plugin (client, informers, authorizer, feature gates, REST mapper through
// k8s.io/apiserver/pkg/admission/initializer; the webhook plugins through
// .../plugin/webhook/initializer) and wraps the chain in the reinvocation handler
// (admission/reinvocation.go): all mutating plugins run, then run once more if one of them
// asked for it (reinvocationPolicy IfNeeded and a later change), then the validating ones.
// What is not here: the other built-in plugins (Priority sets spec.priority before the
// mutating policies run; the inputs are written as objects after it), object defaulting
// (k8s.io/kubernetes), and the API server's own validation of the admitted object.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	policymutating "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	policyvalidating "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	webhookinit "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	webhookmutating "k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	webhookvalidating "k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/component-base/compatibility"
)

// PluginOrder is kube-apiserver's order of the admission plugins the harness runs.
var PluginOrder = []string{
	policymutating.PluginName,    // MutatingAdmissionPolicy
	webhookmutating.PluginName,   // MutatingAdmissionWebhook
	policyvalidating.PluginName,  // ValidatingAdmissionPolicy
	webhookvalidating.PluginName, // ValidatingAdmissionWebhook
}

// Environment is one API server's admission chain and the objects it was built over.
type Environment struct {
	chain   admission.Interface
	objects admission.ObjectInterfaces
	stop    chan struct{}
}

// Request is one object to admit.
type Request struct {
	Object    runtime.Object
	OldObject runtime.Object // UPDATE only
	Operation admission.Operation
	User      user.Info // who sends it; nil: the harness's own user (system:authenticated)
}

// Result is what the API server would answer and store.
type Result struct {
	Object      runtime.Object    // the object after the mutating plugins (as the request left it when denied)
	Err         error             // the admission error (a denial), nil when admitted
	Warnings    []string          // the response's Warning headers' texts, in order
	Annotations map[string]string // audit annotations the plugins added
	// AnnotationCalls: every AddAnnotation call, in order, kept or not.
	AnnotationCalls [][2]string
}

// Namespace is a namespace as the API server creates it: with the kubernetes.io/metadata.name
// label (NamespaceDefaultLabelName, set on every namespace since 1.21).
func Namespace(name string, labels map[string]string) *corev1.Namespace {
	l := map[string]string{corev1.LabelMetadataName: name}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
	}
}

var registerOnce sync.Once

// NewEnvironment builds the chain over the objects (namespaces, policies, bindings, webhook
// configurations; defaulted here as the API server defaults them on create) and waits until
// every plugin has read them.
func NewEnvironment(objects []runtime.Object, plugins []string) (*Environment, error) {
	return NewConfiguredEnvironment(objects, plugins, nil)
}

// NewConfiguredEnvironment is NewEnvironment with each plugin's configuration document (the
// `configuration` of its AdmissionConfiguration entry), e.g. the policy plugins'
// staticManifestsDir (manifest-based admission: the static command).
func NewConfiguredEnvironment(objects []runtime.Object, plugins []string, configs map[string][]byte) (*Environment, error) {
	registerOnce.Do(func() {
		// The MutatingAdmissionPolicy feature is GA and on in 1.36; state it, so an older
		// emulation default cannot turn the plugin into a silent no-op.
		// ManifestBasedAdmissionControlConfig (1.36 alpha) only lets a policy plugin read a
		// staticManifestsDir; without one it changes nothing.
		if err := utilfeature.DefaultMutableFeatureGate.Set("MutatingAdmissionPolicy=true,ManifestBasedAdmissionControlConfig=true"); err != nil {
			panic(err)
		}
	})
	stored := make([]runtime.Object, len(objects))
	for i, o := range objects {
		stored[i] = o.DeepCopyObject()
		DefaultObject(stored[i])
	}
	client := NewClientset(stored...)
	factory := informers.NewSharedInformerFactory(client, 0)
	stop := make(chan struct{})
	registry := admission.NewPlugins()
	policymutating.Register(registry)
	webhookmutating.Register(registry)
	policyvalidating.Register(registry)
	webhookvalidating.Register(registry)
	inits := admission.PluginInitializers{
		initializer.New(client, dynamicfake.NewSimpleDynamicClient(Scheme), factory,
			authorizerfactory.NewAlwaysAllowAuthorizer(), utilfeature.DefaultFeatureGate,
			compatibility.NewEffectiveVersionFromString("1.36", "", ""), stop, RESTMapper(stored)),
		webhookinit.NewPluginInitializer(nil, nil),
		initializer.NewAPIServerIDInitializer("gpuadmit-native-harness"),
		manifestLoaderInitializer{},
	}
	chain, err := registry.NewFromPlugins(plugins, pluginConfigs(configs), inits, nil)
	if err != nil {
		close(stop)
		return nil, fmt.Errorf("admission chain: %w", err)
	}
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			close(stop)
			return nil, fmt.Errorf("informer %v did not sync", typ)
		}
	}
	env := &Environment{chain: chain, objects: objectInterfaces(), stop: stop}
	if err := env.waitReady(); err != nil {
		close(stop)
		return nil, err
	}
	return env, nil
}

// waitReady waits until every plugin has compiled its policies: until then the plugins refuse
// requests ("not yet ready to handle request", after 10 s of waiting each; the API server does
// the same while its informers sync). Compiling large CEL expressions can take minutes.
func (e *Environment) waitReady() error {
	probe := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpuadmit-harness-probe", Namespace: "default"}}
	deadline := time.Now().Add(30 * time.Minute)
	for {
		r := e.Admit(context.Background(), Request{Object: probe, Operation: admission.Create})
		if r.Err == nil || !strings.Contains(r.Err.Error(), "not yet ready") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the admission plugins did not become ready in 30 minutes: %v", r.Err)
		}
	}
}

// Close stops the informers and the plugins' goroutines.
func (e *Environment) Close() { close(e.stop) }

// pluginConfigs hands each plugin its configuration document, none to the others.
type pluginConfigs map[string][]byte

func (c pluginConfigs) ConfigFor(plugin string) (io.Reader, error) {
	if doc, ok := c[plugin]; ok {
		return bytes.NewReader(doc), nil
	}
	return nil, nil
}

// Admit runs the request through the chain as the API server's handler does: mutating
// admission (with its one reinvocation), then validating admission of the mutated object.
func (e *Environment) Admit(ctx context.Context, r Request) Result {
	obj := r.Object.DeepCopyObject()
	var old runtime.Object
	if r.OldObject != nil {
		old = r.OldObject.DeepCopyObject()
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	m, err := metaOf(obj)
	if err != nil {
		return Result{Object: obj, Err: err}
	}
	var options runtime.Object = &metav1.CreateOptions{}
	if r.Operation == admission.Update {
		options = &metav1.UpdateOptions{}
	}
	var who user.Info = &user.DefaultInfo{Name: "gpuadmit-native-harness", Groups: []string{user.AllAuthenticated}}
	if r.User != nil {
		who = r.User
	}
	attrs := &recordingAttributes{Attributes: admission.NewAttributesRecord(obj, old, gvk,
		m.GetNamespace(), m.GetName(), ResourceFor(gvk).Resource, "", r.Operation, options, false, who),
		annotations: map[string]string{}}
	warnings := &warningRecorder{}
	ctx = warning.WithWarningRecorder(ctx, warnings)
	if mutator, ok := e.chain.(admission.MutationInterface); ok && mutator.Handles(r.Operation) {
		err = mutator.Admit(ctx, attrs, e.objects)
	}
	if validator, ok := e.chain.(admission.ValidationInterface); ok && err == nil && validator.Handles(r.Operation) {
		err = validator.Validate(ctx, attrs, e.objects)
	}
	return Result{Object: attrs.GetObject(), Err: err, Warnings: warnings.texts,
		Annotations: attrs.annotations, AnnotationCalls: attrs.calls}
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

// recordingAttributes keeps the audit annotations the plugins add (the webhook plugin adds the
// webhook's auditAnnotations as "<webhook name>/<key>"); the API server writes them to the audit
// log, the harness reads them.
// Every call is recorded, also the ones the record refuses (a key set twice: the validating
// policy plugin sets validation.policy.admission.k8s.io/validation_failure once per failed
// validation of a binding with the Audit action, and only the first call sticks).
type recordingAttributes struct {
	admission.Attributes
	mu          sync.Mutex
	annotations map[string]string
	calls       [][2]string
}

func (a *recordingAttributes) AddAnnotation(key, value string) error {
	a.mu.Lock()
	a.calls = append(a.calls, [2]string{key, value})
	a.mu.Unlock()
	if err := a.Attributes.AddAnnotation(key, value); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.annotations[key] = value
	return nil
}

// warningRecorder is the response's warning list as the API server's recorder keeps it
// (k8s.io/apiserver/pkg/endpoints/filters/warning.go): each distinct text once, in order.
type warningRecorder struct {
	mu    sync.Mutex
	texts []string
}

func (w *warningRecorder) AddWarning(_, text string) {
	if text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.texts {
		if t == text {
			return
		}
	}
	w.texts = append(w.texts, text)
}

// objectInterfaces are the scheme's, with one addition. The API server converts between the
// internal object it admits and the versioned one a plugin works on; here both are the v1
// object (see scheme.go), and the scheme has no v1 -> v1 conversion ("unknown conversion"), so
// a conversion between two objects of one Go type is a deep copy, the identity conversion.
func objectInterfaces() admission.ObjectInterfaces {
	return &admission.RuntimeObjectInterfaces{
		ObjectCreater:            Scheme,
		ObjectTyper:              Scheme,
		ObjectDefaulter:          Scheme,
		ObjectConvertor:          identityConvertor{Scheme},
		EquivalentResourceMapper: runtime.NewEquivalentResourceRegistry(),
	}
}

type identityConvertor struct{ runtime.ObjectConvertor }

func (c identityConvertor) Convert(in, out, context interface{}) error {
	src, okIn := in.(runtime.Object)
	_, unstructuredIn := in.(*unstructured.Unstructured)
	if okIn && !unstructuredIn && reflect.TypeOf(in) == reflect.TypeOf(out) {
		reflect.ValueOf(out).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
		return nil
	}
	return c.ObjectConvertor.Convert(in, out, context)
}
