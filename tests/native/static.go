package main

// The static command: `gpuadmit render --native full --native-static DIR` (manifest-based
// admission, KEP-5793, Kubernetes 1.36 alpha) loaded the way the API server loads it — the
// AdmissionConfiguration the render wrote, read by the ValidatingAdmissionPolicy and
// MutatingAdmissionPolicy plugins, their static sources reading the directories — and every
// golden case and generated object admitted through it and through the same policies created
// as API objects (the chain the differential proves equal to the webhook). The two must answer
// alike: the same object after mutation, the same denial and the same warnings, the policies'
// names told apart only by the ".static.k8s.io" suffix.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/manifest/loader"
	"sigs.k8s.io/yaml"
)

const staticSuffix = ".static.k8s.io"

func staticCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("static", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binary := fs.String("gpuadmit", "", "the gpuadmit binary")
	policy := fs.String("policy", "tests/cases/policy.yaml", "the gpuadmit policy")
	cases := fs.String("cases", "tests/cases", "the golden cases (those of --policy are admitted)")
	generate := fs.Int("generate", 2000, "generated objects (as the differential's) admitted too")
	seed := fs.Int64("seed", 1, "the generator's seed")
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
	g := &Gpuadmit{Binary: *binary}
	out, err := g.run(nil, "render", "--policy", *policy, "--native", "full")
	if err != nil {
		return err
	}
	api, err := LoadNative(out)
	if err != nil {
		return err
	}
	static := filepath.Join(dir, "static")
	if _, err := g.run(nil, "render", "--policy", *policy, "--native", "full", "--native-static", static); err != nil {
		return err
	}
	configs, err := staticPluginConfigs(filepath.Join(static, "admission-configuration.yaml"))
	if err != nil {
		return err
	}
	requests, namespaces, err := staticRequests(*cases, *policy, *generate, *seed)
	if err != nil {
		return err
	}
	apiEnv, err := NewEnvironment(append(api.Objects(), namespaces...), PluginOrder)
	if err != nil {
		return err
	}
	defer apiEnv.Close()
	staticEnv, err := NewConfiguredEnvironment(namespaces, PluginOrder, configs)
	if err != nil {
		return fmt.Errorf("the static manifests: %w", err)
	}
	defer staticEnv.Close()
	var problems []string
	denied := 0
	for _, r := range requests {
		a := apiEnv.Admit(context.Background(), r.req)
		s := staticEnv.Admit(context.Background(), r.req)
		for _, p := range staticDifferences(a, s) {
			problems = append(problems, r.name+": "+p)
		}
		if a.Err != nil {
			denied++
		}
	}
	fmt.Fprintf(stdout, "static: %d objects (%d denied) through %s's policies as API objects and as static manifests (%s)\n",
		len(requests), denied, *policy, strings.Join(pluginNames(configs), ", "))
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(stdout, "  DIFFERENT %s\n", p)
		}
		return fmt.Errorf("%d objects are admitted differently by the static manifests", len(problems))
	}
	fmt.Fprintf(stdout, "  all alike\n")
	return nil
}

// staticPluginConfigs: each plugin's configuration document out of the AdmissionConfiguration,
// as the API server hands it to the plugin (ConfigFor).
func staticPluginConfigs(path string) (map[string][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var config struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Plugins    []struct {
			Name          string                 `json:"name"`
			Configuration map[string]interface{} `json:"configuration"`
		} `json:"plugins"`
	}
	if err := yaml.UnmarshalStrict(data, &config); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if config.APIVersion != "apiserver.config.k8s.io/v1" || config.Kind != "AdmissionConfiguration" {
		return nil, fmt.Errorf("%s: %s %s is not an AdmissionConfiguration", path, config.APIVersion, config.Kind)
	}
	out := map[string][]byte{}
	for _, p := range config.Plugins {
		doc, err := yaml.Marshal(p.Configuration)
		if err != nil {
			return nil, err
		}
		out[p.Name] = doc
	}
	return out, nil
}

// staticRequests: the golden cases of `policy` (CREATE, as the differential admits them) and
// `generate` generated objects, with the namespaces they need.
func staticRequests(casesDir, policy string, generate int, seed int64) ([]namedRequest, []runtime.Object, error) {
	all, err := LoadCases(casesDir)
	if err != nil {
		return nil, nil, err
	}
	var mine []*Case
	var requests []namedRequest
	for _, c := range all {
		if samePath(c.Policy, policy) && c.Undecodable == "" && !c.NeedsClaimLookup() {
			mine = append(mine, c)
			requests = append(requests, namedRequest{c.Name, Request{Object: c.Input, Operation: admission.Create, User: c.User}})
		}
	}
	namespaces := namespacesOf(mine)
	if generate > 0 {
		facts, err := ReadPolicyFacts(policy)
		if err != nil {
			return nil, nil, err
		}
		gen := NewGenerator(seed, facts)
		for i := 0; i < generate; i++ {
			requests = append(requests, namedRequest{fmt.Sprintf("generated %d (seed %d)", i+1, seed), gen.Next()})
		}
		namespaces = mergeNamespaces(namespaces, facts.Namespaces)
	}
	return requests, namespaces, nil
}

// staticDifferences: how the static chain's answer differs from the API objects' one, the
// policies' names compared without the static suffix.
func staticDifferences(api, static Result) []string {
	var out []string
	if (api.Err == nil) != (static.Err == nil) || (api.Err != nil && api.Err.Error() != unsuffixed(static.Err.Error())) {
		out = append(out, fmt.Sprintf("denial: API objects %v, static %v", api.Err, static.Err))
	}
	warnings := make([]string, len(static.Warnings))
	for i, w := range static.Warnings {
		warnings[i] = unsuffixed(w)
	}
	if !reflect.DeepEqual(api.Warnings, warnings) && (len(api.Warnings) > 0 || len(warnings) > 0) {
		out = append(out, fmt.Sprintf("warnings: API objects %q, static %q", api.Warnings, warnings))
	}
	if api.Object != nil && static.Object != nil {
		diff, err := Diff(api.Object, static.Object)
		if err != nil {
			out = append(out, "object: "+err.Error())
		}
		for _, d := range diff {
			out = append(out, "object: "+d)
		}
	}
	return out
}

func unsuffixed(s string) string { return strings.ReplaceAll(s, staticSuffix, "") }

func pluginNames(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// manifestLoaders are what kube-apiserver gives the policy plugins to read their
// staticManifestsDir (initializer.ManifestLoaders: scheme-based decoding, defaulting and
// validation): the library's loader (names, paramKind, paramRef and binding references
// checked there), each object defaulted and validated as the harness does for API objects.
func manifestLoaders() *initializer.ManifestLoaders {
	decoder := serializer.NewCodecFactory(Scheme).UniversalDeserializer()
	return &initializer.ManifestLoaders{
		LoadValidatingPolicyManifests: func(dir string) ([]*admissionv1.ValidatingAdmissionPolicy, []*admissionv1.ValidatingAdmissionPolicyBinding, string, error) {
			return loader.LoadPolicyManifests(dir, decoder,
				accept[*admissionv1.ValidatingAdmissionPolicy], accept[*admissionv1.ValidatingAdmissionPolicyBinding],
				func(b *admissionv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName })
		},
		LoadMutatingPolicyManifests: func(dir string) ([]*admissionv1.MutatingAdmissionPolicy, []*admissionv1.MutatingAdmissionPolicyBinding, string, error) {
			return loader.LoadPolicyManifests(dir, decoder,
				accept[*admissionv1.MutatingAdmissionPolicy], accept[*admissionv1.MutatingAdmissionPolicyBinding],
				func(b *admissionv1.MutatingAdmissionPolicyBinding) string { return b.Spec.PolicyName })
		},
	}
}

// accept takes an object of type T, defaulted and validated; loader.ErrUnrecognizedType for
// another type.
func accept[T runtime.Object](obj runtime.Object) ([]T, error) {
	o, ok := obj.(T)
	if !ok {
		return nil, loader.ErrUnrecognizedType
	}
	DefaultObject(o)
	if problems := Validate(o); len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return []T{o}, nil
}

// manifestLoaderInitializer hands the loaders to the plugins that want them.
type manifestLoaderInitializer struct{}

func (manifestLoaderInitializer) Initialize(plugin admission.Interface) {
	if wants, ok := plugin.(initializer.WantsManifestLoaders); ok {
		wants.SetManifestLoaders(manifestLoaders())
	}
}
