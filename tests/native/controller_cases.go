package main

// Objects that controllers make, and UPDATEs that change no template (docs/decisions.md
// "Controllers converge", docs/native.md): named requests with what each side must do, checked
// beside the differential comparison. The expectations follow Kubernetes, not either side:
// the Deployment controller's EqualIgnoreHash (k8s.io/kubernetes pkg/controller/deployment/util)
// finds its ReplicaSet only while nothing rewrites the copy, and an UPDATE that changes no pod
// template (a scale, a label, the controller's own ReplicaSet UPDATE) must pass unchanged, as
// PodSecurity admission lets it (pod-security-admission admission.go isSignificantPodUpdate).

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

// controllerCase is a request and what each side must answer: denied or not, and whether the
// stored object must equal the request's (nothing mutated).
type controllerCase struct {
	name      string
	req       Request
	denied    bool
	unchanged bool
}

// controllerCases: for a namespace of the policy, a GPU template that the mutations would
// change (no toleration, a limit without a request) and one a rule denies (half a GPU).
func controllerCases(ns string) []controllerCase {
	template := func(gpus string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "train", Image: "registry.example.com/train:1.0",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}}}}},
		}
	}
	replicas := int32(2)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}}
	deployment := func(gpus string) *appsv1.Deployment {
		return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: ns},
			Spec:       appsv1.DeploymentSpec{Replicas: &replicas, Selector: selector, Template: template(gpus)}}
	}
	replicaSet := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "train-5d4f8", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "Deployment", Name: "train", UID: "uid-train", Controller: ptrTo(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: selector, Template: template("1")}}
	scaled := deployment("500m")
	scaledOld := deployment("500m")
	scaledOld.Spec.Replicas = ptrTo(int32(1))
	rolled := deployment("500m")
	rolledOld := deployment("500m")
	rolledOld.Spec.Template.Spec.Containers[0].Image = "registry.example.com/train:0.9"
	rsUpdate := replicaSet.DeepCopy()
	rsOld := replicaSet.DeepCopy()
	rsOld.Spec.Replicas = ptrTo(int32(1))
	return []controllerCase{
		{"a Deployment's ReplicaSet, CREATE: judged, not mutated", Request{Object: replicaSet, Operation: admission.Create}, false, true},
		{"a Deployment's ReplicaSet scaled by its controller (UPDATE, same template)", Request{Object: rsUpdate, OldObject: rsOld, Operation: admission.Update}, false, true},
		{"a violating Deployment scaled (UPDATE, same template)", Request{Object: scaled, OldObject: scaledOld, Operation: admission.Update}, false, true},
		{"a violating Deployment rolled out (UPDATE, template changed)", Request{Object: rolled, OldObject: rolledOld, Operation: admission.Update}, true, false},
	}
}

// checkControllerCase: what the side answered against what the case requires.
func checkControllerCase(c controllerCase, side string, s Side) []string {
	var problems []string
	if s.Denied != c.denied {
		problems = append(problems, fmt.Sprintf("controller case %q: %s: denied=%v, want %v (%s)", c.name, side, s.Denied, c.denied, s.Error))
	}
	if c.unchanged && !s.Denied {
		if diff, err := Diff(c.req.Object, s.Object); err != nil || len(diff) > 0 {
			problems = append(problems, fmt.Sprintf("controller case %q: %s changed the object: %v %v", c.name, side, diff, err))
		}
	}
	return problems
}

// podUpdateCases: Pod UPDATEs (docs/decisions.md "Pod UPDATE"), for a namespace of the policy and
// the first taint of its pools. A CPU pod admitted gated, then given the pool's toleration and
// ungated (what ValidatePodUpdate lets any pod gain: tolerations added, gates removed) must be
// denied (GPU009) on both sides; the same pod, already tolerating the pool (admitted before the
// policy said no), relabelled by a controller must pass unchanged on both sides.
func podUpdateCases(ns string, facts *PolicyFacts) []controllerCase {
	if len(facts.Taints) == 0 {
		return nil
	}
	t := facts.Taints[0]
	toleration := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect}
	pod := func() *corev1.Pod {
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "squatter", Namespace: ns, Labels: map[string]string{"app": "squatter"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example.com/cpu:1.0",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("1")}}}}}}
	}
	gated := pod()
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
	moved := pod()
	moved.Spec.Tolerations = []corev1.Toleration{toleration}
	squatting := pod()
	squatting.Spec.Tolerations = []corev1.Toleration{toleration}
	relabelled := squatting.DeepCopy()
	relabelled.Labels["pod-template-hash"] = "5d4f8"
	return []controllerCase{
		{"a gated CPU pod given a GPU pool's toleration and ungated (Pod UPDATE)", Request{Object: moved, OldObject: gated, Operation: admission.Update}, true, false},
		{"a CPU pod on a GPU pool since before the policy, relabelled (Pod UPDATE)", Request{Object: relabelled, OldObject: squatting, Operation: admission.Update}, false, true},
	}
}
