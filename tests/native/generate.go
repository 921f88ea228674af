package main

// A seeded generator of GPU and CPU pods and workloads for the differential test: random
// containers (whole GPUs as limit, request or both, fractional quantities, MIG and time-sliced
// resources, CPU and memory), init containers and restartable sidecars, DRA claims (pods naming
// templates; ResourceClaims and ResourceClaimTemplates in resource.k8s.io v1, v1beta2 and v1beta1
// asking for the policy's DeviceClasses and others, counts, allocationMode All, adminAccess,
// firstAvailable alternatives), tolerations
// (matching the policy's taints, wildcards, others), node affinity with 0-3 required terms,
// nodeSelector, an existing priority, labels and annotations naming classes, MIG profiles and
// workloads, pod-level resources, what GPU024 judges (NVIDIA_VISIBLE_DEVICES, valueFrom, envFrom,
// device-list mounts by many spellings, hostPath device nodes, CDI annotations); as Pods, Deployments, StatefulSets, Jobs, CronJobs and
// DaemonSets in the policy's tenant namespaces, exempt namespaces and others; CREATE, and for
// the workloads UPDATE with an old object; for Pods also UPDATE pairs (docs/decisions.md "Pod
// UPDATE"): an old Pod that was gated and had fewer tolerations, selectors, affinity or CDI
// annotations (judged), or that differed only in a label (passed untouched). The values come from the policy file (its classes,
// taints, product labels, MIG profiles, priority classes, tenants' namespaces), so most objects
// meet the policy's features.

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/yaml"
)

// PolicyFacts are the values of a gpuadmit policy file the generator draws from.
type PolicyFacts struct {
	Classes         []string
	ProductLabels   map[string][]string // label key -> values, of every class's nodeSelector
	Taints          []corev1.Taint
	MIGProfiles     []string
	PriorityClasses []string
	Workloads       []string // keys of priority.byWorkload
	DeviceClasses   []string // DRA DeviceClasses the classes name
	Namespaces      []string // tenants' namespaces (patterns made concrete), exempt ones, others
}

// ReadPolicyFacts reads the policy file as plain YAML (the harness does not re-implement the
// policy language; these are only values to draw from).
func ReadPolicyFacts(path string) (*PolicyFacts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Spec struct {
			Classes map[string]struct {
				NodeSelector map[string][]string `json:"nodeSelector"`
				Taints       []corev1.Taint      `json:"taints"`
				MIG          struct {
					Profiles []string `json:"profiles"`
				} `json:"mig"`
				DeviceClasses map[string]interface{} `json:"deviceClasses"`
			} `json:"classes"`
			PriorityClasses map[string]interface{} `json:"priorityClasses"`
			Tenants         []struct {
				Namespaces []string `json:"namespaces"`
				Priority   struct {
					ByWorkload map[string]string `json:"byWorkload"`
				} `json:"priority"`
			} `json:"tenants"`
			Enforcement struct {
				Exempt struct {
					Namespaces []string `json:"namespaces"`
				} `json:"exempt"`
			} `json:"enforcement"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &PolicyFacts{ProductLabels: map[string][]string{}}
	addUnique := func(list *[]string, v string) {
		for _, x := range *list {
			if x == v {
				return
			}
		}
		*list = append(*list, v)
	}
	for name, c := range doc.Spec.Classes {
		f.Classes = append(f.Classes, name)
		for k, values := range c.NodeSelector {
			list := f.ProductLabels[k]
			for _, v := range values {
				addUnique(&list, v)
			}
			sort.Strings(list)
			f.ProductLabels[k] = list
		}
		f.Taints = append(f.Taints, c.Taints...)
		for _, p := range c.MIG.Profiles {
			addUnique(&f.MIGProfiles, p)
		}
		for dc := range c.DeviceClasses {
			addUnique(&f.DeviceClasses, dc)
		}
	}
	for name := range doc.Spec.PriorityClasses {
		f.PriorityClasses = append(f.PriorityClasses, name)
	}
	for _, t := range doc.Spec.Tenants {
		for _, ns := range t.Namespaces {
			addUnique(&f.Namespaces, concreteNamespace(ns))
		}
		for w := range t.Priority.ByWorkload {
			addUnique(&f.Workloads, w)
		}
	}
	for _, ns := range doc.Spec.Enforcement.Exempt.Namespaces {
		addUnique(&f.Namespaces, concreteNamespace(ns))
	}
	addUnique(&f.Namespaces, "default")
	addUnique(&f.Namespaces, "unowned-team")
	// Maps come in random order: sort, so one seed gives one sequence.
	for _, list := range [][]string{f.Classes, f.PriorityClasses, f.Workloads, f.MIGProfiles, f.DeviceClasses} {
		sort.Strings(list)
	}
	sort.Slice(f.Taints, func(i, j int) bool {
		a, b := f.Taints[i], f.Taints[j]
		return a.Key+"\x00"+a.Value+"\x00"+string(a.Effect) < b.Key+"\x00"+b.Value+"\x00"+string(b.Effect)
	})
	return f, nil
}

var patternChars = regexp.MustCompile(`[.*+?^$()\[\]{}|\\]+`)

// concreteNamespace turns a tenant's namespace pattern ("ml-.*") into a name it matches.
func concreteNamespace(pattern string) string {
	if !patternChars.MatchString(pattern) {
		return pattern
	}
	name := patternChars.ReplaceAllString(pattern, "") + "gen"
	if re, err := regexp.Compile("^(?:" + pattern + ")$"); err == nil && re.MatchString(name) {
		return name
	}
	return strings.Trim(patternChars.ReplaceAllString(pattern, "x"), "-")
}

// Generator draws objects from a seeded source.
type Generator struct {
	r     *rand.Rand
	u     *rand.Rand // the Pod UPDATE pairs' own source: r's sequence stays what it was
	facts *PolicyFacts
	n     int
}

// NewGenerator makes a generator; one seed gives one sequence.
func NewGenerator(seed int64, facts *PolicyFacts) *Generator {
	return &Generator{r: rand.New(rand.NewSource(seed)), u: rand.New(rand.NewSource(seed ^ 0x5eed)), facts: facts}
}

func (g *Generator) chance(p float64) bool { return g.r.Float64() < p }

func (g *Generator) pick(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[g.r.Intn(len(list))]
}

// Next is the next request: an object and its operation (and old object for UPDATE).
func (g *Generator) Next() Request {
	g.n++
	name := fmt.Sprintf("gen-%05d", g.n)
	ns := g.pick(g.facts.Namespaces)
	if g.chance(0.08) {
		return Request{Object: g.claim(name, ns), Operation: admission.Create}
	}
	meta := g.objectMeta(name, ns)
	spec := g.podSpec()
	var obj runtime.Object
	switch k := g.r.Intn(10); {
	case k < 4:
		obj = &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: meta, Spec: spec}
	default:
		obj = g.workload(k, meta, spec)
	}
	_, isPod := obj.(*corev1.Pod)
	if g.chance(0.15) {
		g.setController(obj, isPod)
	}
	if !isPod && g.chance(0.25) {
		old := obj.DeepCopyObject()
		if g.chance(0.5) {
			// The template changed (a rollout): evaluated as on CREATE.
			setTemplateImage(old, "registry.example.com/old:0.9")
		} else {
			// Only something else changed (a scale, a label): the template is not evaluated
			// (docs/decisions.md, "Controllers converge").
			m, _ := apimeta.Accessor(old)
			m.SetLabels(map[string]string{"app": m.GetName(), "revision": "1"})
		}
		return Request{Object: obj, OldObject: old, Operation: admission.Update}
	}
	if pod, ok := obj.(*corev1.Pod); ok && g.u.Float64() < 0.25 {
		return Request{Object: obj, OldObject: g.podBefore(pod), Operation: admission.Update}
	}
	return Request{Object: obj, Operation: admission.Create}
}

// podBefore is the Pod `pod` was before an UPDATE: half the time gated and without some of what
// Kubernetes lets an UPDATE add (tolerations at any time; nodeSelector, node affinity while
// gated: ValidatePodUpdate) or without its CDI annotations — a placement change, judged; else
// the same Pod but for a label, which no side judges.
func (g *Generator) podBefore(pod *corev1.Pod) *corev1.Pod {
	old := pod.DeepCopy()
	if g.u.Float64() < 0.5 {
		old.Labels = map[string]string{"app": old.Name, "revision": "1"}
		return old
	}
	old.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
	switch g.u.Intn(4) {
	case 0:
		if n := len(old.Spec.Tolerations); n > 0 {
			old.Spec.Tolerations = old.Spec.Tolerations[:g.u.Intn(n)]
		}
	case 1:
		old.Spec.NodeSelector = nil
	case 2:
		old.Spec.Affinity = nil
	default:
		pod.Annotations = mergeAnnotations(pod.Annotations, "cdi.k8s.io/gpus", "nvidia.com/gpu=all")
	}
	return old
}

func mergeAnnotations(a map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range a {
		out[k] = v
	}
	return out
}

// setController gives the object a controller, as its controller would: a Pod's ReplicaSet,
// a ReplicaSet's Deployment, a Job's CronJob, or an operator gpuadmit does not know.
func (g *Generator) setController(obj runtime.Object, isPod bool) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return
	}
	owner := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Operator", Name: "op", UID: "uid-op", Controller: ptrTo(true)}
	switch {
	case isPod:
		owner.APIVersion, owner.Kind = "apps/v1", "ReplicaSet"
	case obj.GetObjectKind().GroupVersionKind().Kind == "ReplicaSet" && g.chance(0.8):
		owner.APIVersion, owner.Kind = "apps/v1", "Deployment"
	case obj.GetObjectKind().GroupVersionKind().Kind == "Job" && g.chance(0.8):
		owner.APIVersion, owner.Kind = "batch/v1", "CronJob"
	}
	if g.chance(0.1) {
		owner.APIVersion, owner.Kind = "example.com/v1", "Operator"
	}
	m.SetOwnerReferences([]metav1.OwnerReference{owner})
}

func (g *Generator) objectMeta(name, ns string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}}
	if g.chance(0.4) && len(g.facts.Workloads) > 0 {
		m.Labels["gpuadmit.io/workload"] = g.pick(append(g.facts.Workloads, "batch", "interactive"))
	}
	if g.chance(0.1) {
		m.Labels["gpuadmit.io/class"] = g.pick(g.facts.Classes)
	}
	if g.chance(0.1) {
		m.Labels["kueue.x-k8s.io/queue-name"] = "team-queue"
	}
	if g.chance(0.35) {
		m.Annotations = map[string]string{"gpuadmit.io/class": g.pick(append(g.facts.Classes, "a10O"))}
	}
	if g.chance(0.1) && len(g.facts.MIGProfiles) > 0 {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations["gpuadmit.io/mig-profile"] = g.pick(append(g.facts.MIGProfiles, "4g.40gb"))
	}
	if g.chance(0.04) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations["cdi.k8s.io/extra"] = "nvidia.com/gpu=all"
	}
	return m
}

func (g *Generator) workload(k int, meta metav1.ObjectMeta, spec corev1.PodSpec) runtime.Object {
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": meta.Name}}, Spec: spec}
	if g.chance(0.3) {
		template.Annotations = meta.Annotations
		meta.Annotations = nil
	}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": meta.Name}}
	replicas := int32(1 + g.r.Intn(4))
	switch {
	case k < 5:
		return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: selector, Template: template}}
	case k < 6:
		return &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}, ObjectMeta: meta,
			Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: selector, Template: template}}
	case k < 7:
		return &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: selector, Template: template, ServiceName: meta.Name}}
	case k < 8:
		template.Spec.RestartPolicy = corev1.RestartPolicyNever
		return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta,
			Spec: batchv1.JobSpec{Template: template}}
	case k < 9:
		template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		return &batchv1.CronJob{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"}, ObjectMeta: meta,
			Spec: batchv1.CronJobSpec{Schedule: "0 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}}}}
	default:
		return &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}, ObjectMeta: meta,
			Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template}}
	}
}

func setTemplateImage(obj runtime.Object, image string) {
	var spec *corev1.PodSpec
	switch o := obj.(type) {
	case *appsv1.Deployment:
		spec = &o.Spec.Template.Spec
	case *appsv1.ReplicaSet:
		spec = &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		spec = &o.Spec.Template.Spec
	case *appsv1.DaemonSet:
		spec = &o.Spec.Template.Spec
	case *batchv1.Job:
		spec = &o.Spec.Template.Spec
	case *batchv1.CronJob:
		spec = &o.Spec.JobTemplate.Spec.Template.Spec
	}
	if spec != nil && len(spec.Containers) > 0 {
		spec.Containers[0].Image = image
	}
}

func (g *Generator) podSpec() corev1.PodSpec {
	var s corev1.PodSpec
	gpu := g.chance(0.6)
	for i, n := 0, 1+g.r.Intn(3); i < n; i++ {
		s.Containers = append(s.Containers, g.container(fmt.Sprintf("c%d", i), gpu && (i == 0 || g.chance(0.3))))
	}
	for i, n := 0, g.r.Intn(3); i < n; i++ {
		c := g.container(fmt.Sprintf("init%d", i), gpu && g.chance(0.2))
		if g.chance(0.4) {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		s.InitContainers = append(s.InitContainers, c)
	}
	s.Tolerations = g.tolerations()
	s.Affinity = g.affinity()
	if g.chance(0.15) {
		key := g.pick(sortedKeys(g.facts.ProductLabels))
		s.NodeSelector = map[string]string{key: g.pick(g.facts.ProductLabels[key])}
	}
	if g.chance(0.3) && len(g.facts.PriorityClasses) > 0 {
		s.PriorityClassName = g.pick(append(g.facts.PriorityClasses, "system-cluster-critical"))
		prio := int32(g.r.Intn(3) * 1000)
		s.Priority = &prio
	}
	if g.chance(0.08) {
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptrTo("single-gpu")}}
		s.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}
	if g.chance(0.05) {
		s.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi")}}
	}
	if g.chance(0.05) {
		s.RuntimeClassName = ptrTo("nvidia")
	}
	for _, c := range append(append([]corev1.Container{}, s.Containers...), s.InitContainers...) {
		if len(c.VolumeMounts) > 0 {
			s.Volumes = []corev1.Volume{{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "dev", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
					Path: g.pick([]string{"/dev/nvidia0", "/dev", "/dev/shm", "/var/log"})}}}}
			break
		}
	}
	return s
}

func (g *Generator) container(name string, gpu bool) corev1.Container {
	c := corev1.Container{Name: name, Image: "registry.example.com/app:1.0",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}}
	q := resource.MustParse
	if gpu {
		res := corev1.ResourceName(g.pick([]string{"nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"}))
		count := q(fmt.Sprint(g.pick([]string{"1", "1", "2", "4", "8", "12"})))
		if g.chance(0.05) {
			count = q("500m")
		}
		switch g.r.Intn(4) {
		case 0:
			c.Resources.Limits[res] = count
		case 1:
			c.Resources.Requests[res] = count
		case 2:
			c.Resources.Limits[res], c.Resources.Requests[res] = count, count
		default:
			c.Resources.Limits[res], c.Resources.Requests[res] = count, q("1")
		}
	}
	if g.chance(0.5) {
		c.Resources.Requests[corev1.ResourceCPU] = q(g.pick([]string{"100m", "2", "8", "2500m"}))
	}
	if g.chance(0.5) {
		c.Resources.Limits[corev1.ResourceMemory] = q(g.pick([]string{"1Gi", "40Gi", "128Gi"}))
	}
	if g.chance(0.3) {
		c.Resources.Requests[corev1.ResourceMemory] = q(g.pick([]string{"512Mi", "16Gi", "96Gi"}))
	}
	if g.chance(0.15) {
		c.Env = append(c.Env, corev1.EnvVar{Name: "NVIDIA_VISIBLE_DEVICES", Value: g.pick([]string{"all", "void", "none", "0"})})
	}
	if g.chance(0.2) {
		c.Env = append(c.Env, corev1.EnvVar{Name: "LOG_LEVEL", Value: "info"})
	}
	g.visibility(&c)
	return c
}

// visibility adds what GPU024 judges on every container (issue 34 points 3 and 4): the
// variable from valueFrom, envFrom with and without a prefix, and volume mounts at the
// device-list folder by the spellings filepath.Clean maps under it (and near misses), or of
// the node's device nodes (podSpec adds the volumes "e" and "dev").
func (g *Generator) visibility(c *corev1.Container) {
	if g.chance(0.03) && !hasEnv(c, "NVIDIA_VISIBLE_DEVICES") {
		c.Env = append(c.Env, corev1.EnvVar{Name: "NVIDIA_VISIBLE_DEVICES", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "gpu-env"}, Key: "devices"}}})
	}
	if g.chance(0.06) {
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{Prefix: g.pick([]string{"", "", "APP_", "NVIDIA_"}),
			ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-env"}}})
	}
	for i, n := 0, g.mounts(); i < n; i++ {
		// Mount paths are a list map's keys: unique, as the API server requires.
		if p := g.mountPath(); i == 0 || c.VolumeMounts[0].MountPath != p {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: g.pick([]string{"e", "e", "dev"}), MountPath: p})
		}
	}
}

func hasEnv(c *corev1.Container, name string) bool {
	for _, e := range c.Env {
		if e.Name == name {
			return true
		}
	}
	return false
}

func (g *Generator) mounts() int {
	if !g.chance(0.15) {
		return 0
	}
	return 1 + g.r.Intn(2)
}

// mountPath: a spelling of the device-list folder, or 1-10 random elements (fewer than the
// 64 the native CEL decides exactly with ".." elements; docs/native.md).
func (g *Generator) mountPath() string {
	if g.chance(0.4) {
		return g.pick([]string{"/data", "/var/run/nvidia-container-devices/all", "/var/run/nvidia-container-devicesall",
			"/var/run/x/../nvidia-container-devices/all", "//var/run/./nvidia-container-devices/0",
			"var/run/nvidia-container-devices/1", "/run/nvidia-container-devices/all",
			"/var/run/nvidia-container-devices/../all", "/var/run/nvidia-container-devices"})
	}
	elements := []string{"", ".", "..", "..", "var", "run", "x", "nvidia-container-devices", "nvidia-container-devicesall", "all"}
	parts := make([]string, 1+g.r.Intn(10))
	for i := range parts {
		parts[i] = g.pick(elements)
	}
	p := strings.Join(parts, "/")
	if g.chance(0.8) {
		p = "/" + p
	}
	return p
}

func (g *Generator) tolerations() []corev1.Toleration {
	var out []corev1.Toleration
	for i, n := 0, g.r.Intn(4); i < n; i++ {
		switch g.r.Intn(5) {
		case 0:
			out = append(out, corev1.Toleration{Operator: corev1.TolerationOpExists})
		case 1:
			out = append(out, corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
		default:
			if len(g.facts.Taints) == 0 {
				continue
			}
			t := g.facts.Taints[g.r.Intn(len(g.facts.Taints))]
			tol := corev1.Toleration{Key: t.Key, Effect: t.Effect, Operator: corev1.TolerationOpExists}
			if t.Value != "" && g.chance(0.6) {
				tol.Operator, tol.Value = corev1.TolerationOpEqual, t.Value
			}
			if g.chance(0.2) {
				tol.Effect = ""
			}
			out = append(out, tol)
		}
	}
	return out
}

func (g *Generator) affinity() *corev1.Affinity {
	terms := g.r.Intn(4)
	if terms == 0 && g.chance(0.7) {
		return nil
	}
	a := &corev1.Affinity{}
	if terms > 0 {
		sel := &corev1.NodeSelector{}
		for i := 0; i < terms; i++ {
			var term corev1.NodeSelectorTerm
			for j, n := 0, g.r.Intn(3); j < n; j++ {
				key := g.pick(append(sortedKeys(g.facts.ProductLabels), "topology.kubernetes.io/zone"))
				values := g.facts.ProductLabels[key]
				if len(values) == 0 {
					values = []string{"zone-a", "zone-b"}
				}
				op := corev1.NodeSelectorOperator(g.pick([]string{"In", "In", "NotIn", "Exists"}))
				req := corev1.NodeSelectorRequirement{Key: key, Operator: op}
				if op != corev1.NodeSelectorOpExists {
					req.Values = []string{g.pick(values)}
				}
				term.MatchExpressions = append(term.MatchExpressions, req)
			}
			if len(term.MatchExpressions) == 0 {
				term.MatchFields = []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}}
			}
			sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, term)
		}
		a.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}
	}
	if g.chance(0.3) {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 10, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}}}
	}
	return a
}

// claim is a ResourceClaim or ResourceClaimTemplate (CREATE only: gpuadmit judges claims on
// CREATE, their spec is immutable) with 1-3 requests, as k8s.io/api/resource/v1, v1beta2 or
// v1beta1 write them: v1beta1 keeps a request's fields at the top, the others under `exactly`;
// each version has firstAvailable alternatives (DeviceSubRequest: no adminAccess). Decoded
// through the harness's scheme like a golden case's input.
func (g *Generator) claim(name, ns string) runtime.Object {
	version := g.pick([]string{"v1", "v1", "v1", "v1beta2", "v1beta1"})
	var requests []interface{}
	for i, n := 0, 1+g.r.Intn(3); i < n; i++ {
		request := map[string]interface{}{"name": fmt.Sprintf("r%d", i)}
		if g.chance(0.2) {
			var alternatives []interface{}
			for j, m := 0, 1+g.r.Intn(3); j < m; j++ {
				alternative := g.deviceRequest(false)
				alternative["name"] = fmt.Sprintf("a%d", j)
				alternatives = append(alternatives, alternative)
			}
			request["firstAvailable"] = alternatives
		} else if version == "v1beta1" {
			for k, v := range g.deviceRequest(true) {
				request[k] = v
			}
		} else {
			request["exactly"] = g.deviceRequest(true)
		}
		requests = append(requests, request)
	}
	spec := map[string]interface{}{"devices": map[string]interface{}{"requests": requests}}
	kind := "ResourceClaim"
	if g.chance(0.5) {
		kind, spec = "ResourceClaimTemplate", map[string]interface{}{"spec": spec}
	}
	doc, err := json.Marshal(map[string]interface{}{"apiVersion": "resource.k8s.io/" + version, "kind": kind,
		"metadata": map[string]interface{}{"name": name, "namespace": ns}, "spec": spec})
	if err != nil {
		panic(err)
	}
	obj, err := Decode(doc)
	if err != nil {
		panic(fmt.Sprintf("a generated claim does not decode: %v: %s", err, doc))
	}
	return obj
}

// deviceRequest: a DeviceClass of the policy (or one it does not map), and an exact count, a
// default count or allocationMode All; adminAccess only where the API has it (not in an
// alternative).
func (g *Generator) deviceRequest(adminAccess bool) map[string]interface{} {
	r := map[string]interface{}{"deviceClassName": g.pick(append(g.facts.DeviceClasses, "fpga.example.com"))}
	switch g.r.Intn(6) {
	case 0:
		r["allocationMode"] = "All"
	case 1: // ExactCount, count 1 by default
	default:
		r["allocationMode"] = "ExactCount"
		r["count"] = []int64{1, 1, 2, 3, 8, 9, 16}[g.r.Intn(7)]
	}
	if adminAccess && g.chance(0.1) {
		r["adminAccess"] = true
	}
	return r
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func ptrTo[T any](v T) *T { return &v }
