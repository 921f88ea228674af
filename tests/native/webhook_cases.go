package main

// Golden cases through gpuadmit's webhook as the API server calls it: the case's policy served
// by `gpuadmit serve`, the configurations `gpuadmit render` prints, Kubernetes' webhook plugins.
// Required per case: the decision, the exact error text of a denial (rule ids and messages),
// the warnings, the stored object (expected.yaml, compared as Kubernetes compares objects), and
// the same outcome again for the stored object (idempotence: no change on a second pass).

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
)

// CaseOutcome is one case's verdict.
type CaseOutcome struct {
	Case     string
	Skipped  string   // why the case was not run
	Problems []string // empty: passed
}

// policyGroups maps each policy file to its cases, in case order.
func policyGroups(cases []*Case) ([]string, map[string][]*Case) {
	groups := map[string][]*Case{}
	var order []string
	for _, c := range cases {
		if _, ok := groups[c.Policy]; !ok {
			order = append(order, c.Policy)
		}
		groups[c.Policy] = append(groups[c.Policy], c)
	}
	return order, groups
}

func namespacesOf(cases []*Case) []runtime.Object {
	seen := map[string]bool{}
	var out []runtime.Object
	for _, c := range cases {
		if !seen[c.Namespace] {
			seen[c.Namespace] = true
			out = append(out, Namespace(c.Namespace, nil))
		}
	}
	return out
}

// RunWebhookCases runs every case through the webhook.
func RunWebhookCases(g *Gpuadmit, cases []*Case) ([]CaseOutcome, error) {
	order, groups := policyGroups(cases)
	var outcomes []CaseOutcome
	for _, policy := range order {
		group := groups[policy]
		got, err := runWebhookGroup(g, policy, group)
		if err != nil {
			return nil, err
		}
		outcomes = append(outcomes, got...)
	}
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].Case < outcomes[j].Case })
	return outcomes, nil
}

func runWebhookGroup(g *Gpuadmit, policy string, group []*Case) ([]CaseOutcome, error) {
	server, err := g.Serve(policy)
	if err != nil {
		return nil, err
	}
	defer server.Stop()
	configs, err := g.WebhookConfigurations(policy, server)
	if err != nil {
		return nil, err
	}
	env, err := NewEnvironment(append(configs, namespacesOf(group)...), PluginOrder)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	var out []CaseOutcome
	for _, c := range group {
		if c.Undecodable != "" {
			out = append(out, CaseOutcome{Case: c.Name, Skipped: "the API server refuses the input " +
				"before admission (its decoder: " + c.Undecodable + ")"})
			continue
		}
		if c.NeedsClaimLookup() {
			out = append(out, CaseOutcome{Case: c.Name, Skipped: "its pods name DRA claims, which " +
				"gpuadmit reads only from the API server (serve --dra-lookup); the harness serves no API"})
			continue
		}
		out = append(out, CaseOutcome{Case: c.Name, Problems: checkWebhookCase(env, c)})
	}
	return out, nil
}

func checkWebhookCase(env *Environment, c *Case) []string {
	ctx := context.Background()
	r := env.Admit(ctx, Request{Object: c.Input, Operation: admission.Create, User: c.User})
	problems := checkOutcome(c, r, "")
	if r.Err != nil || len(problems) > 0 {
		return problems
	}
	// Idempotence: the stored object admitted again is stored unchanged, with the same warnings.
	again := env.Admit(ctx, Request{Object: r.Object, Operation: admission.Create, User: c.User})
	return append(problems, checkOutcome(c, again, "second pass: ")...)
}

func checkOutcome(c *Case, r Result, prefix string) []string {
	var problems []string
	add := func(format string, args ...interface{}) {
		problems = append(problems, prefix+fmt.Sprintf(format, args...))
	}
	switch {
	case c.Denied() && r.Err == nil:
		add("admitted, want denied: %s", c.WebhookDenial())
	case !c.Denied() && r.Err != nil:
		add("denied, want admitted: %v", r.Err)
	case c.Denied() && r.Err.Error() != c.WebhookDenial():
		add("denial\n  got:  %v\n  want: %s", r.Err, c.WebhookDenial())
	}
	if want := c.WebhookWarnings(); !reflect.DeepEqual(r.Warnings, want) && !(len(want) == 0 && len(r.Warnings) == 0) {
		add("warnings\n  got:  %q\n  want: %q", r.Warnings, want)
	}
	if r.Err == nil {
		diff, err := Diff(c.Expected, r.Object)
		if err != nil {
			add("comparing with expected.yaml: %v", err)
		} else if len(diff) > 0 {
			add("stored object differs from expected.yaml: %s", strings.Join(diff, "; "))
		}
	}
	return problems
}
