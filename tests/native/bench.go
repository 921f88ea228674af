package main

// `bench`: the per-admission cost of the native policies beside the webhook's, both through
// the API server's plugins, measured with testing.Benchmark: one request through the whole
// chain (mutating admission with its reinvocation, then validating admission), as the API
// server spends it. The webhook's figure includes its two HTTPS calls to `gpuadmit serve`
// (mutate, validate) on the loopback; the chain alone (no policy, no webhook) is the baseline.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
)

func benchCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binary := fs.String("gpuadmit", "", "the gpuadmit binary")
	policy := fs.String("policy", "tests/cases/policy.yaml", "the gpuadmit policy")
	native := fs.String("native", "", "native policies from this file (default: gpuadmit render --native full)")
	cases := fs.String("cases", "tests/cases", "the golden cases (their inputs are the objects measured)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the native policies' rows here (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" {
		return fmt.Errorf("--gpuadmit is required")
	}
	dir, cleanup, err := workDir("")
	if err != nil {
		return err
	}
	defer cleanup()
	g, err := NewGpuadmit(*binary, dir)
	if err != nil {
		return err
	}
	var set *NativeSet
	if *native != "" {
		set, err = LoadNativeFile(*native)
	} else {
		var out []byte
		if out, err = g.run(nil, "render", "--policy", *policy, "--native", "full"); err == nil {
			set, err = LoadNative(out)
		}
	}
	if err != nil {
		return err
	}
	objects, err := benchObjects(*cases)
	if err != nil {
		return err
	}
	server, err := g.Serve(*policy)
	if err != nil {
		return err
	}
	defer server.Stop()
	configs, err := g.WebhookConfigurations(*policy, server)
	if err != nil {
		return err
	}
	namespaces := []runtime.Object{}
	for _, o := range objects {
		m, _ := metaOf(o.obj)
		namespaces = mergeNamespaces(namespaces, []string{m.GetNamespace()})
	}
	chains := []struct {
		name    string
		objects []runtime.Object
	}{
		{"chain alone (no policy, no webhook)", namespaces},
		{"native policies (render --native full)", append(set.Objects(), namespaces...)},
		{"webhook (gpuadmit serve, 2 HTTPS calls)", append(configs, namespaces...)},
	}
	fmt.Fprintf(stdout, "bench: one admission through the plugin chain, ns/op (%s)\n", time.Now().UTC().Format(time.RFC3339))
	for _, c := range chains {
		before := liveHeap()
		env, err := NewEnvironment(c.objects, PluginOrder)
		if err != nil {
			return err
		}
		// The API server's memory for the policies: the Go heap still live once they are loaded
		// and compiled (the first admission evaluates every expression once), over what was live
		// before the chain existed.
		// (Not for the webhook's chain: what the previous chain leaves is freed while it loads.)
		if !strings.HasPrefix(c.name, "webhook") {
			env.Admit(context.Background(), Request{Object: objects[0].obj, Operation: admission.Create})
			fmt.Fprintf(stdout, "  %-42s live heap after loading: %.1f MB\n", c.name,
				float64(int64(liveHeap())-int64(before))/(1<<20))
		}
		for _, o := range objects {
			r := Request{Object: o.obj, Operation: admission.Create}
			first := env.Admit(context.Background(), r)
			profiling := *cpuProfile != "" && strings.HasPrefix(c.name, "native")
			if profiling {
				if err := startProfile(*cpuProfile, o.name); err != nil {
					return err
				}
			}
			result := testing.Benchmark(func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					env.Admit(context.Background(), r)
				}
			})
			if profiling {
				pprof.StopCPUProfile()
			}
			verdict := "admitted"
			if first.Err != nil {
				verdict = "denied"
			}
			fmt.Fprintf(stdout, "  %-42s %-48s %12d ns/op %8d B/op (%s, %d runs)\n", c.name, o.name,
				result.NsPerOp(), result.AllocedBytesPerOp(), verdict, result.N)
		}
		env.Close()
	}
	return nil
}

// startProfile starts a CPU profile into a file of its own per object: PATH.N (N = a slug of
// the object's name).
// liveHeap: the bytes of the Go heap still reachable, after a full collection.
func liveHeap() uint64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

func startProfile(path, object string) error {
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(object))
	f, err := os.Create(path + "." + slug)
	if err != nil {
		return err
	}
	return pprof.StartCPUProfile(f)
}

type benchObject struct {
	name string
	obj  runtime.Object
}

// benchObjects: a one-container GPU pod (case 001), a GPU Deployment (case 007), the
// 100-container pod of the cost check, a CPU pod.
func benchObjects(casesDir string) ([]benchObject, error) {
	cases, err := LoadCases(casesDir)
	if err != nil {
		return nil, err
	}
	var out []benchObject
	for _, c := range cases {
		if c.Name == "001-pod-limit-only-gets-request" || c.Name == "007-deployment-class-from-top-level-annotation" {
			out = append(out, benchObject{"case " + c.Name, c.Input})
		}
	}
	p := CostPod(100)
	p.Namespace = "ml-vision"
	out = append(out, benchObject{"pod of 100 GPU containers (ml-vision)", p})
	out = append(out, benchObject{"a CPU pod (ml-vision)", cpuPod("ml-vision")})
	return out, nil
}

// cpuPod: one container asking for CPU and memory only, in a tenant's namespace: what most
// admissions of a cluster are (the cost the native policies add to every pod).
func cpuPod(namespace string) *corev1.Pod {
	q := resource.MustParse
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "app",
			Image: "registry.example.com/app:1.0",
			Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")},
			},
		}}},
	}
}
