package main

// `diff`: the golden cases and generated objects through the webhook and the native policies.
// The native policies and their feature table come from `gpuadmit render --native MODE` for
// each policy (README.md, "Conventions"), or, with --native and --table, from files (the
// hand-written pair in testdata/ that stood in until the renderer existed).

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

type diffOptions struct {
	gpuadmit, cases, notes, work string
	attacks                      string
	native, table, policy        string // files instead of the renderer
	modes                        string
	genPolicy                    string
	generate                     int
	seed                         int64
	workers                      int
	only                         string // comma-separated policy files: compare only these
	dump                         string
}

func diffCommand(args []string, stdout, stderr io.Writer) error {
	var o diffOptions
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.gpuadmit, "gpuadmit", "", "the gpuadmit binary")
	fs.StringVar(&o.cases, "cases", "tests/cases", "the golden cases")
	fs.StringVar(&o.attacks, "attacks", "tests/tenant_attacks/cases", "the tenant-attack cases (docs/security.md); \"\" for none")
	fs.StringVar(&o.notes, "notes", "tests/native/testdata/webhook-cases.yaml", "how cases read through the API server")
	fs.StringVar(&o.work, "work", "", "a directory for certificates and renders (default: temporary)")
	fs.StringVar(&o.native, "native", "", "native policies from this file instead of `gpuadmit render --native`")
	fs.StringVar(&o.table, "table", "", "with --native: the feature table (JSON, as render --native-table prints it)")
	fs.StringVar(&o.policy, "policy", "", "with --native: the gpuadmit policy the file was written for")
	fs.StringVar(&o.modes, "modes", "full,fallback", "render modes to compare (renderer only)")
	fs.StringVar(&o.genPolicy, "gen-policy", "tests/cases/policy.yaml", "the policy generated objects are admitted under")
	fs.IntVar(&o.generate, "generate", 10000, "generated objects")
	fs.Int64Var(&o.seed, "seed", 1, "the generator's seed")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU()*2, "objects admitted at once")
	fs.StringVar(&o.only, "only", "", "compare only the cases of these policy files (comma-separated)")
	fs.StringVar(&o.dump, "dump", "", "write each object with a disagreement and both answers under this directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.gpuadmit == "" {
		return fmt.Errorf("--gpuadmit is required")
	}
	if (o.native == "") != (o.table == "") || (o.native != "" && o.policy == "") {
		return fmt.Errorf("--native, --table and --policy go together")
	}
	dir, cleanup, err := workDir(o.work)
	if err != nil {
		return err
	}
	defer cleanup()
	g, err := NewGpuadmit(o.gpuadmit, dir)
	if err != nil {
		return err
	}
	cases, err := LoadCases(o.cases)
	if err != nil {
		return err
	}
	if err := LoadCaseNotes(o.notes, cases); err != nil {
		return err
	}
	modes := strings.Split(o.modes, ",")
	ok := true
	for _, mode := range modes {
		d, err := runDiff(g, &o, mode, dir, cases)
		if err != nil {
			return err
		}
		var out strings.Builder
		ok = d.Report(&out) && ok
		fmt.Fprint(stdout, out.String())
	}
	if !ok {
		return fmt.Errorf("the webhook and the native policies disagree (DISAGREE lines above)")
	}
	return nil
}

// nativeSource gives the native policies and table for a policy file.
func nativeSource(g *Gpuadmit, o *diffOptions, mode, dir, policy string) (*NativeSet, *FeatureTable, error) {
	if o.native != "" {
		set, err := LoadNativeFile(o.native)
		if err != nil {
			return nil, nil, err
		}
		table, err := LoadFeatureTable(o.table, mode)
		return set, table, err
	}
	out, err := g.run(nil, "render", "--policy", policy, "--native", mode)
	if err != nil {
		return nil, nil, err
	}
	set, err := LoadNative(out)
	if err != nil {
		return nil, nil, fmt.Errorf("gpuadmit render --native %s --policy %s: %w", mode, policy, err)
	}
	tableJSON, err := g.run(nil, "render", "--policy", policy, "--native-table")
	if err != nil {
		return nil, nil, err
	}
	table, err := ParseFeatureTable(tableJSON, mode)
	if err != nil {
		return nil, nil, fmt.Errorf("gpuadmit render --native-table --policy %s: %w", policy, err)
	}
	return set, table, nil
}

type namedRequest struct {
	name string
	req  Request
}

func runDiff(g *Gpuadmit, o *diffOptions, mode, dir string, cases []*Case) (*Differential, error) {
	order, groups := policyGroups(cases)
	genPolicy, _ := filepath.Abs(o.genPolicy)
	var attacks []attackRequest
	if o.attacks != "" {
		var skipped []string
		var err error
		if attacks, skipped, err = LoadAttackCases(o.attacks); err != nil {
			return nil, err
		}
		for _, s := range skipped {
			fmt.Fprintf(os.Stderr, "native-harness: SKIP %s\n", s)
		}
	}
	policies := uniquePolicies(order, genPolicy)
	for _, a := range attacks {
		policies = uniquePolicies(policies, a.policy)
	}
	var total *Differential
	for _, policy := range policies {
		if o.native != "" && !samePath(policy, o.policy) {
			continue
		}
		// --only limits the golden cases; the attack cases always run, each under its policy.
		casesToo := o.only == "" || anySamePath(policy, strings.Split(o.only, ","))
		if !casesToo && !anyAttackUnder(attacks, policy) {
			continue
		}
		set, table, err := nativeSource(g, o, mode, dir, policy)
		if err != nil {
			return nil, err
		}
		var work []namedRequest
		for _, c := range groups[policy] {
			if casesToo && c.Undecodable == "" && !c.NeedsClaimLookup() {
				work = append(work, namedRequest{c.Name, Request{Object: c.Input, Operation: "CREATE", User: c.User}})
			}
		}
		var namespaces []k8sruntime.Object
		if casesToo {
			namespaces = namespacesOf(groups[policy])
		}
		if casesToo && samePath(policy, genPolicy) && o.generate > 0 {
			facts, err := ReadPolicyFacts(policy)
			if err != nil {
				return nil, err
			}
			gen := NewGenerator(o.seed, facts)
			for i := 0; i < o.generate; i++ {
				r := gen.Next()
				m, _ := metaOf(r.Object)
				work = append(work, namedRequest{fmt.Sprintf("generated %s %s/%s (seed %d)", r.Object.GetObjectKind().GroupVersionKind().Kind, m.GetNamespace(), m.GetName(), o.seed), r})
			}
			namespaces = mergeNamespaces(namespaces, facts.Namespaces)
		}
		var attackNamespaces []string
		for _, a := range attacks {
			if samePath(policy, a.policy) {
				work = append(work, namedRequest{a.name, a.req})
				attackNamespaces = append(attackNamespaces, a.namespace)
			}
		}
		namespaces = mergeNamespaces(namespaces, attackNamespaces)
		var checks []controllerCase
		if casesToo && samePath(policy, genPolicy) && o.generate > 0 {
			facts, _ := ReadPolicyFacts(policy)
			if len(facts.Namespaces) > 0 {
				checks = append(controllerCases(facts.Namespaces[0]), podUpdateCases(facts.Namespaces[0], facts)...)
			}
			for _, c := range checks {
				work = append(work, namedRequest{"controller case: " + c.name, c.req})
			}
		}
		d, err := diffPolicy(g, o, policy, set, table, namespaces, work)
		if err != nil {
			return nil, err
		}
		for _, c := range checks {
			for _, a := range d.Admissions {
				if a.Name != "controller case: "+c.name {
					continue
				}
				d.Problems = append(d.Problems, checkControllerCase(c, "webhook", a.Webhook)...)
				if table.Mode == "full" || !c.denied { // fallback: validations only, a subset of the rules
					d.Problems = append(d.Problems, checkControllerCase(c, "native", a.Native)...)
				}
			}
		}
		if total == nil {
			total = d
		} else {
			total.Merge(d)
		}
	}
	if total == nil {
		return nil, fmt.Errorf("no golden case or generated object for the policy given")
	}
	return total, nil
}

func diffPolicy(g *Gpuadmit, o *diffOptions, policy string, set *NativeSet, table *FeatureTable, namespaces []k8sruntime.Object, work []namedRequest) (*Differential, error) {
	server, err := g.Serve(policy)
	if err != nil {
		return nil, err
	}
	defer server.Stop()
	configs, err := g.WebhookConfigurations(policy, server)
	if err != nil {
		return nil, err
	}
	webhook, err := NewEnvironment(append(configs, namespaces...), PluginOrder)
	if err != nil {
		return nil, err
	}
	defer webhook.Close()
	nativeObjects := AuditEveryDenial(set).Objects()
	if table.Mode == "fallback" && len(set.Mutating) > 0 {
		return nil, fmt.Errorf("the fallback render holds %d MutatingAdmissionPolicies; fallback is validating policies only", len(set.Mutating))
	}
	native, err := NewEnvironment(append(nativeObjects, namespaces...), PluginOrder)
	if err != nil {
		return nil, err
	}
	defer native.Close()
	pair := Pair{Webhook: webhook, Native: native}
	d := NewDifferential(table)
	if o.dump != "" {
		d.DumpDir = filepath.Join(o.dump, table.Mode)
	}
	start := time.Now()
	results := make([]Admissions, len(work))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < max(o.workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = pair.Admit(work[i].name, work[i].req, table.Mode == "full")
			}
		}()
	}
	for i := range work {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, a := range results {
		d.Record(a)
		if len(a.Name) > 17 && a.Name[:17] == "controller case: " {
			d.Admissions = append(d.Admissions, a)
		}
	}
	d.Elapsed += time.Since(start)
	return d, nil
}

func uniquePolicies(order []string, extra string) []string {
	out := append([]string(nil), order...)
	for _, p := range out {
		if samePath(p, extra) {
			return out
		}
	}
	return append(out, extra)
}

func anyAttackUnder(attacks []attackRequest, policy string) bool {
	for _, a := range attacks {
		if samePath(a.policy, policy) {
			return true
		}
	}
	return false
}

func anySamePath(a string, list []string) bool {
	for _, b := range list {
		if samePath(a, b) {
			return true
		}
	}
	return false
}

func samePath(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

func mergeNamespaces(objs []k8sruntime.Object, names []string) []k8sruntime.Object {
	have := map[string]bool{}
	for _, o := range objs {
		m, _ := metaOf(o)
		have[m.GetName()] = true
	}
	sort.Strings(names)
	for _, n := range names {
		if !have[n] {
			have[n] = true
			objs = append(objs, Namespace(n, nil))
		}
	}
	return objs
}
