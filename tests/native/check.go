package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// checkCommand: `check [--pods N] FILE...` loads each file of rendered native policies and
// fails on a load problem, a compile error, a runtime error on the costed pod, or a cost over a
// limit; it prints the costs, highest first.
func checkCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	containers := fs.Int("containers", 100, "containers of the pod the costs are measured on")
	top := fs.Int("top", 10, "expressions to list by cost (all with -top 0)")
	loadOnly := fs.Bool("load-only", false, "load (decode, convert, default, validate) without compiling")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no file of native policies given")
	}
	failed := 0
	for _, file := range fs.Args() {
		set, err := LoadNativeFile(file)
		if err != nil {
			return err
		}
		if *loadOnly {
			fmt.Fprintf(stdout, "check %s: loaded %d ValidatingAdmissionPolicies, %d bindings; %d MutatingAdmissionPolicies, %d bindings\n",
				file, len(set.Validating), len(set.ValidatingBinding), len(set.Mutating), len(set.MutatingBinding))
			continue
		}
		n, err := reportSet(stdout, file, set, *containers, *top)
		if err != nil {
			return err
		}
		failed += n
	}
	if failed > 0 {
		return fmt.Errorf("%d problems", failed)
	}
	return nil
}

func reportSet(w io.Writer, file string, set *NativeSet, containers, top int) (int, error) {
	exprs, costs, err := CheckSet(set, CostPod(containers))
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "check %s: %d ValidatingAdmissionPolicies, %d bindings; %d MutatingAdmissionPolicies, %d bindings; %d CEL expressions\n",
		file, len(set.Validating), len(set.ValidatingBinding), len(set.Mutating), len(set.MutatingBinding), len(exprs))
	if len(set.Ignored) > 0 {
		fmt.Fprintf(w, "  other objects (not admission policies): %s\n", strings.Join(set.Ignored, ", "))
	}
	problems := 0
	for _, e := range exprs {
		for _, msg := range e.Errors {
			problems++
			fmt.Fprintf(w, "  COMPILE ERROR %s %s: %s\n", e.Policy, e.Field, msg)
		}
		if e.RunError != "" {
			problems++
			fmt.Fprintf(w, "  RUNTIME ERROR %s %s on the %d-container pod: %s\n", e.Policy, e.Field, containers, e.RunError)
		}
		if e.Cost > celconfig.PerCallLimit {
			problems++
			fmt.Fprintf(w, "  OVER LIMIT %s %s: cost %d > %d per expression\n", e.Policy, e.Field, e.Cost, celconfig.PerCallLimit)
		}
	}
	for _, c := range costs {
		if c.Cost > c.Budget {
			problems++
			fmt.Fprintf(w, "  OVER BUDGET %s %s: cost %d > %d\n", c.Policy, c.What, c.Cost, c.Budget)
		}
	}
	sorted := append([]Expression(nil), exprs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Cost > sorted[j].Cost })
	if top == 0 || top > len(sorted) {
		top = len(sorted)
	}
	fmt.Fprintf(w, "  CEL cost on a pod of %d containers, per expression (limit %d), highest first:\n", containers, celconfig.PerCallLimit)
	for _, e := range sorted[:top] {
		fmt.Fprintf(w, "    %9d  %s %s\n", e.Cost, e.Policy, e.Field)
	}
	byCompile := append([]Expression(nil), exprs...)
	sort.SliceStable(byCompile, func(i, j int) bool { return byCompile[i].Compile > byCompile[j].Compile })
	var total time.Duration
	for _, e := range exprs {
		total += e.Compile
	}
	fmt.Fprintf(w, "  compile time, both environments (all: %v), slowest first:\n", total.Round(time.Millisecond))
	// Not a failure (a loaded machine is slow), but what kube-apiserver spends on each policy
	// whenever it (re)loads it, per API server.
	if slow := byCompile[0]; slow.Compile > 2*time.Second {
		fmt.Fprintf(w, "  SLOW COMPILE: %s %s takes %v to compile (%d characters): the API server pays it at every load of the policy\n",
			slow.Policy, slow.Field, slow.Compile.Round(time.Millisecond), len(slow.Source))
	}
	for _, e := range byCompile[:top] {
		fmt.Fprintf(w, "    %9v  %s %s (%d characters)\n", e.Compile.Round(time.Millisecond), e.Policy, e.Field, len(e.Source))
	}
	fmt.Fprintf(w, "  per policy evaluation (budget), highest first:\n")
	for i, c := range costs {
		if i == top {
			break
		}
		fmt.Fprintf(w, "    %9d  (of %d) %s %s\n", c.Cost, c.Budget, c.Policy, c.What)
	}
	return problems, nil
}
