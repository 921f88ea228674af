package main

// Native policies as `gpuadmit render --native` prints them (README.md, "Conventions"), loaded
// as the API server would store them.

import (
	"bytes"
	"fmt"
	"os"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// NativeSet is the admission policies and bindings of one render.
type NativeSet struct {
	Validating        []*admissionv1.ValidatingAdmissionPolicy
	ValidatingBinding []*admissionv1.ValidatingAdmissionPolicyBinding
	Mutating          []*admissionv1.MutatingAdmissionPolicy
	MutatingBinding   []*admissionv1.MutatingAdmissionPolicyBinding
	Ignored           []string // other kinds in the output, "<Kind>/<name>"
}

// Objects are the set's objects, for an Environment.
func (s *NativeSet) Objects() []runtime.Object {
	var out []runtime.Object
	for _, o := range s.Validating {
		out = append(out, o)
	}
	for _, o := range s.ValidatingBinding {
		out = append(out, o)
	}
	for _, o := range s.Mutating {
		out = append(out, o)
	}
	for _, o := range s.MutatingBinding {
		out = append(out, o)
	}
	return out
}

// LoadNativeFile reads rendered YAML from a file.
func LoadNativeFile(path string) (*NativeSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	set, err := LoadNative(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// LoadNative decodes, converts (v1beta1 mutating policies to v1), defaults and validates the
// documents; a binding of a policy the set does not hold is an error, as is a name twice.
func LoadNative(data []byte) (*NativeSet, error) {
	docs, err := ReadDocuments(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	set := &NativeSet{}
	var problems []string
	names := map[string]bool{}
	for i, doc := range docs {
		obj, err := Decode(doc)
		if err == nil {
			obj, err = MutatingPolicyV1(obj)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("document %d: %v", i+1, err))
			continue
		}
		DefaultObject(obj)
		m, _ := metaOf(obj)
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		id := kind + "/" + m.GetName()
		if ns := m.GetNamespace(); ns != "" {
			// Namespaced objects (the ResourceQuota of each tenant's namespace) share names.
			id = kind + "/" + ns + "/" + m.GetName()
		}
		for _, p := range Validate(obj) {
			problems = append(problems, id+": "+p)
		}
		if names[id] {
			problems = append(problems, id+": defined twice")
		}
		names[id] = true
		switch o := obj.(type) {
		case *admissionv1.ValidatingAdmissionPolicy:
			set.Validating = append(set.Validating, o)
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			set.ValidatingBinding = append(set.ValidatingBinding, o)
		case *admissionv1.MutatingAdmissionPolicy:
			set.Mutating = append(set.Mutating, o)
		case *admissionv1.MutatingAdmissionPolicyBinding:
			set.MutatingBinding = append(set.MutatingBinding, o)
		default:
			set.Ignored = append(set.Ignored, id)
		}
	}
	for _, b := range set.ValidatingBinding {
		if !names["ValidatingAdmissionPolicy/"+b.Spec.PolicyName] {
			problems = append(problems, fmt.Sprintf("ValidatingAdmissionPolicyBinding/%s: no policy %q", b.Name, b.Spec.PolicyName))
		}
	}
	for _, b := range set.MutatingBinding {
		if !names["MutatingAdmissionPolicy/"+b.Spec.PolicyName] {
			problems = append(problems, fmt.Sprintf("MutatingAdmissionPolicyBinding/%s: no policy %q", b.Name, b.Spec.PolicyName))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return set, nil
}

// CostPod is the object the CEL costs are measured on: a GPU pod of n containers (the issue's
// bound: 100), each with GPU, CPU, memory and MIG requests and limits, env and a volume mount,
// two init containers (one a restartable sidecar), tolerations, three required node affinity
// terms of three expressions each, labels and annotations — every list an expression may walk.
func CostPod(n int) *corev1.Pod {
	q := resource.MustParse
	containers := make([]corev1.Container, n)
	for i := range containers {
		containers[i] = corev1.Container{
			Name:  fmt.Sprintf("worker-%03d", i),
			Image: "registry.example.com/train:1.0",
			Env: []corev1.EnvVar{{Name: "RANK", Value: fmt.Sprint(i)}, {Name: "WORLD", Value: fmt.Sprint(n)},
				{Name: "NCCL_DEBUG", Value: "INFO"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"nvidia.com/gpu": q("1"), "nvidia.com/mig-1g.10gb": q("1"), corev1.ResourceMemory: q("64Gi")},
				Requests: corev1.ResourceList{"nvidia.com/gpu": q("1"), corev1.ResourceCPU: q("8"), corev1.ResourceMemory: q("48Gi")},
			},
		}
	}
	always := corev1.ContainerRestartPolicyAlways
	init := []corev1.Container{
		{Name: "fetch", Image: "busybox", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": q("1")}}},
		{Name: "sidecar", Image: "envoy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")}}},
	}
	var terms []corev1.NodeSelectorTerm
	for t := 0; t < 3; t++ {
		terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "nvidia.com/gpu.product", Operator: corev1.NodeSelectorOpIn, Values: []string{"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"}},
			{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{fmt.Sprintf("zone-%d", t)}},
			{Key: "node.example.com/pool", Operator: corev1.NodeSelectorOpExists},
		}})
	}
	prio := int32(0)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "cost", Namespace: "cost-check",
			Labels:            map[string]string{"app": "train", "gpuadmit.io/workload": "training"},
			Annotations:       map[string]string{"gpuadmit.io/class": "a100", "gpuadmit.io/mig-profile": "1g.10gb"},
			CreationTimestamp: metav1.NewTime(time.Unix(0, 0).UTC())},
		Spec: corev1.PodSpec{
			Containers:     containers,
			InitContainers: init,
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: "pool.example.com/a100", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			Affinity:          &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}},
			NodeSelector:      map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
			PriorityClassName: "gpu-batch",
			Priority:          &prio,
			Volumes:           []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

// CheckSet compiles and costs every expression of the set on the object.
func CheckSet(set *NativeSet, obj runtime.Object) ([]Expression, []PolicyCost, error) {
	in, err := newCostInput(obj)
	if err != nil {
		return nil, nil, err
	}
	// Each policy compiles on its own (a few seconds each for the largest variables): on every
	// core at once, the results kept in the policies' order.
	type result struct {
		exprs []Expression
		costs []PolicyCost
	}
	checks := make([]func() ([]Expression, []PolicyCost), 0, len(set.Validating)+len(set.Mutating))
	for _, p := range set.Validating {
		checks = append(checks, func() ([]Expression, []PolicyCost) { return CheckValidatingPolicy(p, in) })
	}
	for _, p := range set.Mutating {
		checks = append(checks, func() ([]Expression, []PolicyCost) { return CheckMutatingPolicy(p, in) })
	}
	results := make([]result, len(checks))
	slots := make(chan struct{}, goruntime.NumCPU())
	var wg sync.WaitGroup
	for i, check := range checks {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			results[i].exprs, results[i].costs = check()
		}()
	}
	wg.Wait()
	var exprs []Expression
	var costs []PolicyCost
	for _, r := range results {
		exprs, costs = append(exprs, r.exprs...), append(costs, r.costs...)
	}
	sort.SliceStable(costs, func(i, j int) bool { return costs[i].Cost > costs[j].Cost })
	return exprs, costs, nil
}
