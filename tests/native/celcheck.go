package main

// Every CEL expression of every native policy, compiled and costed the way the plugins compile
// and run them. The API server compiles an admission policy's expressions only when a request
// is evaluated against it (an error then fails or skips the request by failurePolicy), so a
// policy with a typo loads fine and breaks at the first pod; here every expression is compiled
// up front, in both environments the API server uses: environment.NewExpressions (what its
// validation of a created or updated policy allows) and environment.StoredExpressions (what
// the plugin compiles at admission).
//
// Compilers mirror the plugins': validating.compilePolicy (k8s.io/apiserver/pkg/admission/
// plugin/policy/validating/plugin.go) and mutating.compilePolicy (.../mutating/compilation.go):
// one CompositedCompiler over environment.MustBaseEnvSet(DefaultCompatibilityVersion()) with
// the policy's variables stored; validations and match conditions with the authorizer
// declared, messageExpressions without; mutations with the patch types. Cost is the runtime
// cost CEL reports (EvalDetails.ActualCost, what the plugins charge against the budgets of
// k8s.io/apiserver/pkg/apis/cel/config.go) on a pod of 100 containers: each expression against
// PerCallLimit (1,000,000), each policy evaluation against RuntimeCELCostBudget (10,000,000:
// the validations of a binding share one; each mutation has its own), match conditions against
// RuntimeCELCostBudgetMatchConditions (2,500,000).

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	admissionreviewv1 "k8s.io/api/admission/v1"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	policymutating "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	policyvalidating "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/cel/environment"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// Expression is one CEL expression of a policy, with what compiling and running it gave.
type Expression struct {
	Policy   string // "ValidatingAdmissionPolicy/<name>"
	Field    string // "spec.validations[0].expression"
	Source   string
	Errors   []string // compile errors ("<environment>: <error>")
	Cost     int64    // runtime cost on the costed object, variables it reads included; -1: not run
	RunError string   // a runtime error on the costed object
	// Compile: the time to compile it in each environment (parse, type-check, plan), what
	// the API server spends on it when it loads the policy.
	Compile time.Duration
}

// PolicyCost is one policy evaluation's cost against its budget.
type PolicyCost struct {
	Policy string
	What   string // "validations", "match conditions", "mutation 0"
	Cost   int64
	Budget int64
}

var compileModes = []struct {
	name string
	mode environment.Type
}{{"create-time (NewExpressions)", environment.NewExpressions}, {"admission-time (StoredExpressions)", environment.StoredExpressions}}

func newCompositedCompiler() *plugincel.CompositedCompiler {
	c, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		panic(err) // a base environment that does not build is a broken library, not bad input
	}
	return c
}

// Progress receives a line per expression checked (native-harness -v).
var Progress io.Writer = io.Discard

func (e *Expression) progress() {
	fmt.Fprintf(Progress, "checked %s %s: %d characters, compiled in %v, cost %d\n", e.Policy, e.Field,
		len(e.Source), e.Compile.Round(time.Millisecond), e.Cost)
}

// modeCompilers are a policy's compilers, one per environment of compileModes, with its
// variables stored (each expression is then compiled alone, so its errors are its own; each
// evaluation gets a new composition context, so it pays for the variables it reads).
// The variables' own results come back as Expressions, costed by reading each one alone.
func modeCompilers(policy string, vars []plugincel.NamedExpressionAccessor, decls plugincel.OptionalVariableDeclarations, in *costInput) ([]*plugincel.CompositedCompiler, []Expression) {
	out := make([]*plugincel.CompositedCompiler, len(compileModes))
	exprs := make([]Expression, len(vars))
	for j, v := range vars {
		exprs[j] = Expression{Policy: policy, Field: fmt.Sprintf("spec.variables[%d] (%s)", j, v.GetName()),
			Source: v.GetExpression(), Cost: -1}
	}
	for i, m := range compileModes {
		out[i] = newCompositedCompiler()
		for j, v := range vars {
			start := time.Now()
			r := out[i].CompileAndStoreVariable(v, decls, m.mode)
			exprs[j].Compile += time.Since(start)
			if r.Error != nil {
				exprs[j].Errors = append(exprs[j].Errors, m.name+": "+r.Error.Error())
			}
		}
	}
	stored := out[len(out)-1] // compileModes ends with StoredExpressions, what the plugin runs
	for j, v := range vars {
		read := &policymutating.Variable{Name: v.GetName(), Expression: "variables." + v.GetName()}
		ev := stored.CompileCondition([]plugincel.ExpressionAccessor{read}, decls, environment.StoredExpressions)
		exprs[j].cost(stored, ev, decls.HasAuthorizer, in)
		exprs[j].progress()
	}
	return out, exprs
}

// costInput is what an expression sees: the object, the request, the namespace.
type costInput struct {
	versioned *admission.VersionedAttributes
	request   *admissionRequest
	namespace *namespaceObject
}

type (
	admissionRequest = admissionreviewv1.AdmissionRequest
	namespaceObject  = corev1.Namespace
)

func newCostInput(obj runtime.Object) (*costInput, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	m, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	gvr := ResourceFor(gvk).Resource
	attr := admission.NewAttributesRecord(obj, nil, gvk, m.GetNamespace(), m.GetName(), gvr, "",
		admission.Create, &metav1.CreateOptions{}, false,
		&user.DefaultInfo{Name: "gpuadmit-native-harness", Groups: []string{user.AllAuthenticated}})
	return &costInput{
		versioned: &admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk, VersionedObject: obj},
		request: plugincel.CreateAdmissionRequest(attr, metav1.GroupVersionResource(gvr),
			metav1.GroupVersionKind(gvk)),
		namespace: plugincel.CreateNamespaceObject(Namespace(m.GetNamespace(), nil)),
	}, nil
}

func (in *costInput) run(ctx context.Context, e plugincel.ConditionEvaluator, authz bool, budget int64) ([]plugincel.EvaluationResult, int64, error) {
	vars := plugincel.OptionalVariableBindings{}
	if authz {
		vars.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	}
	results, remaining, err := e.ForInput(ctx, in.versioned, in.request, vars, in.namespace, budget)
	if err != nil {
		return nil, 0, err
	}
	return results, budget - remaining, nil
}

// CheckValidatingPolicy compiles and costs every expression of a ValidatingAdmissionPolicy.
func CheckValidatingPolicy(p *admissionv1.ValidatingAdmissionPolicy, in *costInput) ([]Expression, []PolicyCost) {
	name := "ValidatingAdmissionPolicy/" + p.Name
	vars := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		vars[i] = &policyvalidating.Variable{Name: v.Name, Expression: v.Expression}
	}
	withAuthz := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	noAuthz := withAuthz
	noAuthz.HasAuthorizer = false
	type item struct {
		field    string
		accessor plugincel.ExpressionAccessor
		decls    plugincel.OptionalVariableDeclarations
		budget   string // which budget its cost counts against
		// onlyIfFailed: a messageExpression, run by the plugin only when validation
		// onlyIfFailed-1 fails (0: always run)
		onlyIfFailed int
	}
	var items []item
	for i := range p.Spec.MatchConditions {
		items = append(items, item{fmt.Sprintf("spec.matchConditions[%d]", i),
			(*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]), withAuthz, "match", 0})
	}
	for i, v := range p.Spec.Validations {
		items = append(items, item{fmt.Sprintf("spec.validations[%d].expression", i),
			&policyvalidating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}, withAuthz, "validations", 0})
		if v.MessageExpression != "" {
			items = append(items, item{fmt.Sprintf("spec.validations[%d].messageExpression", i),
				&policyvalidating.MessageExpressionCondition{MessageExpression: v.MessageExpression}, noAuthz, "validations", i + 1})
		}
	}
	for i, a := range p.Spec.AuditAnnotations {
		items = append(items, item{fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i),
			&policyvalidating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}, withAuthz, "audit", 0})
	}
	totals := map[string]int64{}
	failed := map[int]bool{} // validation index -> false on the costed object
	compilers, exprs := modeCompilers(name, vars, withAuthz, in)
	for _, it := range items {
		e := Expression{Policy: name, Field: it.field, Source: it.accessor.GetExpression(), Cost: -1}
		run := in
		if it.onlyIfFailed > 0 && !failed[it.onlyIfFailed-1] {
			run = nil // the validation passed: the plugin does not evaluate its message
		}
		for i, m := range compileModes {
			c := compilers[i]
			start := time.Now()
			ev := c.CompileCondition([]plugincel.ExpressionAccessor{it.accessor}, it.decls, m.mode)
			e.Compile += time.Since(start)
			for _, err := range ev.CompilationErrors() {
				e.Errors = append(e.Errors, m.name+": "+err.Error())
			}
			if m.mode == environment.StoredExpressions {
				if out := e.cost(c, ev, it.decls.HasAuthorizer, run); out != nil && it.budget == "validations" && it.onlyIfFailed == 0 {
					failed[len(failed)] = out == types.False // validations come in order: index len(failed)
				}
			}
		}
		if e.Cost > 0 && it.budget != "" {
			totals[it.budget] += e.Cost
		}
		e.progress()
		exprs = append(exprs, e)
	}
	costs := []PolicyCost{{name, "validations (with their messageExpressions)", totals["validations"], celconfig.RuntimeCELCostBudget}}
	if len(p.Spec.MatchConditions) > 0 {
		costs = append(costs, PolicyCost{name, "match conditions", totals["match"], celconfig.RuntimeCELCostBudgetMatchConditions})
	}
	return exprs, costs
}

// cost runs one compiled expression (and, through the composition context, the variables it
// reads) on the input.
// It returns the expression's value (nil when not run or on an error).
func (e *Expression) cost(c *plugincel.CompositedCompiler, ev plugincel.ConditionEvaluator, authz bool, in *costInput) ref.Val {
	if len(e.Errors) > 0 || in == nil {
		return nil
	}
	results, cost, err := in.run(c.CreateContext(context.Background()), ev, authz, math.MaxInt64/2)
	if err != nil {
		e.RunError = err.Error()
		return nil
	}
	e.Cost = cost
	for _, r := range results {
		if r.Error != nil {
			e.RunError = r.Error.Error()
			return nil
		}
		return r.EvalResult
	}
	return nil
}

// CheckMutatingPolicy compiles and costs every expression of a MutatingAdmissionPolicy.
func CheckMutatingPolicy(p *admissionv1.MutatingAdmissionPolicy, in *costInput) ([]Expression, []PolicyCost) {
	name := "MutatingAdmissionPolicy/" + p.Name
	decls := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	patchDecls := decls
	patchDecls.HasPatchTypes = true
	vars := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		vars[i] = &policymutating.Variable{Name: v.Name, Expression: v.Expression}
	}
	var costs []PolicyCost
	compilers, exprs := modeCompilers(name, vars, decls, in)
	compile := func(field string, accessor plugincel.ExpressionAccessor, mutating bool, budget string) {
		e := Expression{Policy: name, Field: field, Source: accessor.GetExpression(), Cost: -1}
		for i, m := range compileModes {
			c := compilers[i]
			var ev plugincel.ConditionEvaluator
			start := time.Now()
			if mutating {
				ev = mutatingAsCondition{c.CompileMutatingEvaluator(accessor, patchDecls, m.mode)}
			} else {
				ev = c.CompileCondition([]plugincel.ExpressionAccessor{accessor}, decls, m.mode)
			}
			e.Compile += time.Since(start)
			for _, err := range ev.CompilationErrors() {
				e.Errors = append(e.Errors, m.name+": "+err.Error())
			}
			if m.mode == environment.StoredExpressions {
				e.cost(c, ev, true, in)
			}
		}
		e.progress()
		exprs = append(exprs, e)
		if budget != "" {
			costs = append(costs, PolicyCost{name, budget, max(e.Cost, 0), celconfig.RuntimeCELCostBudget})
		}
	}
	for i := range p.Spec.MatchConditions {
		compile(fmt.Sprintf("spec.matchConditions[%d]", i), (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]), false, "")
	}
	for i, m := range p.Spec.Mutations {
		field := fmt.Sprintf("spec.mutations[%d]", i)
		switch {
		case m.JSONPatch != nil:
			compile(field+".jsonPatch.expression", &patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, true, fmt.Sprintf("mutation %d", i))
		case m.ApplyConfiguration != nil:
			compile(field+".applyConfiguration.expression", &patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, true, fmt.Sprintf("mutation %d", i))
		}
	}
	return exprs, costs
}

// mutatingAsCondition lets a mutation's evaluator be run like a condition for its cost.
type mutatingAsCondition struct{ plugincel.MutatingEvaluator }

func (m mutatingAsCondition) ForInput(ctx context.Context, versionedAttr *admission.VersionedAttributes, request *admissionRequest, vars plugincel.OptionalVariableBindings, ns *namespaceObject, budget int64) ([]plugincel.EvaluationResult, int64, error) {
	r, remaining, err := m.MutatingEvaluator.ForInput(ctx, versionedAttr, request, vars, ns, budget)
	return []plugincel.EvaluationResult{r}, remaining, err
}
