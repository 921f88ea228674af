package main

// The differential test: one object through gpuadmit's webhook (gpuadmit serve behind the
// webhook plugins) and through the native policies (the policy plugins: mutating policies as
// the API server runs them, then validating policies), compared feature by feature for the
// features the renderer's table marks native.
//
// What is compared (README.md, "The differential test"):
//   - rules: for each rule, whether it denies (and whether it warns) on both sides. The API
//     server's error names only the first failed validation (validating/dispatcher.go builds it
//     from deniedDecisions[0]); to read every one, the harness adds the Audit action to each
//     Deny binding, which records each failure in the validation_failure audit annotation
//     without changing the decision;
//   - the decision, when every rule the webhook denied with is native;
//   - the stored object, compared as Kubernetes compares objects (compare.go), when every
//     mutation the webhook made (its `mutations` audit annotation) is native;
//   - idempotence: the stored object admitted again (as the same request) changes nothing and
//     gets the same decision, on each side.
// In fallback mode (validating policies only, the floor while the webhook is down) the native
// side sees the object as submitted; a native denial the webhook would not make is a
// disagreement, and so is a webhook denial by a native rule the fallback lets through.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/yaml"
)

// Feature is a row of the renderer's table (`gpuadmit render --native-table`, README.md
// "Conventions" 4): a rule or a mutation, whether the native policies carry it, and the kinds of
// object they carry it for.
type Feature struct {
	ID     string
	Kind   string // "rule" | "mutation"
	Native string // "yes" | "partial" | "no" (in fallback mode: "yes" for the rules it carries)
	Why    string
	Kinds  []string // schema.GroupKind strings ("Pod", "Deployment.apps"); empty: every kind
	Writes []string // a mutation's members (the renderer's notation), for the report
	// Fallback: a rule of the render's fallback set (holds on unmutated objects).
	Fallback bool
	// Unmutated: a rule the native policies apply to an object they never mutate (JudgedOnly):
	// the render's judges_unmutated, in fallback mode the fallback set only.
	Unmutated bool
}

// FeatureTable is the renderer's table read for one mode.
type FeatureTable struct {
	Mode     string // "full" | "fallback"
	Features []Feature
	// Immutable: the kinds whose pod templates an UPDATE cannot change (schema.GroupKind
	// strings; engine/workload_kinds.h TemplateUpdates::kImmutable).
	Immutable map[string]bool
}

// renderTable is `gpuadmit render --native-table [--policy P]` as printed (render/native_table.cc
// table_json). Decoded strictly: a member the harness does not know is an error, not a feature
// silently left uncompared.
type renderTable struct {
	Rules []struct {
		ID        string `json:"id"`
		Native    string `json:"native"`
		Category  string `json:"category"`
		Fallback  bool   `json:"fallback"`
		Unmutated bool   `json:"unmutated"`
		Why       string `json:"why"`
	} `json:"rules"`
	Mutations []struct {
		Name   string   `json:"name"`
		Native string   `json:"native"`
		Why    string   `json:"why"`
		Writes []string `json:"writes"`
	} `json:"mutations"`
	Kinds []struct {
		Group              string `json:"group"`
		Kind               string `json:"kind"`
		APIVersion         string `json:"apiVersion,omitempty"`
		ImmutableTemplates bool   `json:"immutableTemplates"`
		ValidatedOnly      bool   `json:"validatedOnly"`
	} `json:"kinds"`
	NotNativeKinds []struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Why        string `json:"why"`
	} `json:"not_native_kinds"`
}

// ParseFeatureTable reads the table for a mode: in full mode each row's own coverage; in
// fallback mode the rules the fallback render carries (their "fallback" member) are "yes" and
// everything else "no" (the fallback render has no mutating policy).
func ParseFeatureTable(data []byte, mode string) (*FeatureTable, error) {
	if mode != "full" && mode != "fallback" {
		return nil, fmt.Errorf("feature table: mode %q, want full or fallback", mode)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var raw renderTable
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("feature table: %w", err)
	}
	// Rules judge every kind of the table; mutations only the kinds the policies may mutate (not
	// the DRA claims, validatedOnly).
	var judged, mutated []string
	t := &FeatureTable{Mode: mode, Immutable: map[string]bool{}}
	for _, k := range raw.Kinds {
		gk := schema.GroupKind{Group: k.Group, Kind: k.Kind}.String()
		judged = append(judged, gk)
		if !k.ValidatedOnly {
			mutated = append(mutated, gk)
		}
		if k.ImmutableTemplates {
			t.Immutable[gk] = true
		}
	}
	seen := map[string]bool{}
	add := func(f Feature) error {
		switch {
		case f.Native != "yes" && f.Native != "partial" && f.Native != "no":
			return fmt.Errorf("feature table: %s: native %q, want yes, partial or no", f.ID, f.Native)
		case f.ID == "" || seen[f.ID]:
			return fmt.Errorf("feature table: id %q empty or twice", f.ID)
		}
		seen[f.ID] = true
		t.Features = append(t.Features, f)
		return nil
	}
	for _, r := range raw.Rules {
		native := r.Native
		if mode == "fallback" && native != "no" {
			native = map[bool]string{true: "yes", false: "no"}[r.Fallback]
		}
		unmutated := r.Unmutated && (mode == "full" || r.Fallback)
		if err := add(Feature{ID: r.ID, Kind: "rule", Native: native, Why: r.Why, Kinds: judged,
			Fallback: r.Fallback, Unmutated: unmutated}); err != nil {
			return nil, err
		}
	}
	for _, m := range raw.Mutations {
		native := m.Native
		if mode == "fallback" {
			native = "no"
		}
		if err := add(Feature{ID: m.Name, Kind: "mutation", Native: native, Why: m.Why, Kinds: mutated, Writes: m.Writes}); err != nil {
			return nil, err
		}
	}
	if len(t.Features) == 0 {
		return nil, fmt.Errorf("feature table: no rule and no mutation")
	}
	return t, nil
}

// LoadFeatureTable reads a table file.
func LoadFeatureTable(path, mode string) (*FeatureTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFeatureTable(data, mode)
}

func (t *FeatureTable) feature(id string) *Feature {
	for i := range t.Features {
		if t.Features[i].ID == id {
			return &t.Features[i]
		}
	}
	return nil
}

// covers: the feature is native (yes or partial) for objects of this kind.
func (f *Feature) covers(kind string) bool {
	if f == nil || f.Native == "no" {
		return false
	}
	if len(f.Kinds) == 0 {
		return true
	}
	for _, k := range f.Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// Side is what one side (webhook or native) did with an object.
type Side struct {
	Denied    bool
	Error     string
	DenyRules []string // rule ids of the denial, sorted, unique
	WarnRules []string // rule ids of the warnings, sorted, unique
	Mutations []string // the webhook's mutations (audit annotation); empty on the native side
	Object    runtime.Object
}

var (
	webhookDenial   = regexp.MustCompile(`(?:: |; )((?:GPU\d{3})|PODSPEC): `)
	ruleAtStart     = regexp.MustCompile(`^((?:GPU\d{3})|PODSPEC)(?: \(audit\))?: `)
	policyWarning   = regexp.MustCompile(`^Validation failed for ValidatingAdmissionPolicy '[^']*' with binding '[^']*': ((?:GPU\d{3})|PODSPEC): `)
	mutationsSuffix = "/mutations"
)

func uniqueSorted(in []string) []string {
	set := map[string]bool{}
	for _, s := range in {
		set[s] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// WebhookSide reads a result of the webhook chain.
func WebhookSide(r Result) Side {
	s := Side{Object: r.Object}
	if r.Err != nil {
		s.Denied, s.Error = true, r.Err.Error()
		const marker = "gpuadmit denied "
		if i := strings.Index(s.Error, marker); i >= 0 {
			for _, m := range webhookDenial.FindAllStringSubmatch(s.Error[i:], -1) {
				s.DenyRules = append(s.DenyRules, m[1])
			}
		}
	}
	for _, w := range r.Warnings {
		if m := ruleAtStart.FindStringSubmatch(w); m != nil {
			s.WarnRules = append(s.WarnRules, m[1])
		}
	}
	for key, value := range r.Annotations {
		if strings.HasPrefix(key, "mutate.") && strings.HasSuffix(key, mutationsSuffix) && value != "" {
			s.Mutations = strings.Split(value, ",")
		}
	}
	s.DenyRules, s.WarnRules, s.Mutations = uniqueSorted(s.DenyRules), uniqueSorted(s.WarnRules), uniqueSorted(s.Mutations)
	return s
}

// NativeSide reads a result of the native chain: the rules of every failed validation (the
// audit annotation calls, see AuditEveryDenial) and of the warnings.
func NativeSide(r Result) Side {
	s := Side{Object: r.Object}
	if r.Err != nil {
		s.Denied, s.Error = true, r.Err.Error()
	}
	for _, call := range r.AnnotationCalls {
		if call[0] != "validation.policy.admission.k8s.io/validation_failure" {
			continue
		}
		var failures []struct {
			Message           string   `json:"message"`
			ValidationActions []string `json:"validationActions"`
		}
		if json.Unmarshal([]byte(call[1]), &failures) != nil {
			continue
		}
		for _, f := range failures {
			if m := ruleAtStart.FindStringSubmatch(f.Message); m != nil && contains(f.ValidationActions, "Deny") {
				s.DenyRules = append(s.DenyRules, m[1])
			}
		}
	}
	for _, w := range r.Warnings {
		if m := policyWarning.FindStringSubmatch(w); m != nil {
			s.WarnRules = append(s.WarnRules, m[1])
		}
	}
	s.DenyRules, s.WarnRules = uniqueSorted(s.DenyRules), uniqueSorted(s.WarnRules)
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// AuditEveryDenial adds the Audit action to every binding that denies, so each failed
// validation is recorded (the decision is unchanged: Deny still denies; Audit may be combined
// with Deny, only Deny with Warn may not).
func AuditEveryDenial(set *NativeSet) *NativeSet {
	out := *set
	out.ValidatingBinding = nil
	for _, b := range set.ValidatingBinding {
		b = b.DeepCopy()
		actions := b.Spec.ValidationActions
		if containsAction(actions, admissionv1.Deny) && !containsAction(actions, admissionv1.Audit) {
			b.Spec.ValidationActions = append(actions, admissionv1.Audit)
		}
		out.ValidatingBinding = append(out.ValidatingBinding, b)
	}
	return &out
}

func containsAction(list []admissionv1.ValidationAction, a admissionv1.ValidationAction) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}

// Tally counts, per feature, the objects it concerned and the verdicts.
type Tally struct {
	Concerned, Agree, Disagree, NotComparable int
}

// Differential holds the verdicts of a run.
type Differential struct {
	Table    *FeatureTable
	Tallies  map[string]*Tally
	Objects  int
	Problems []string // every disagreement on a "yes" feature, with the object's name
	Notes    []string // disagreements on "partial" features
	Skipped  map[string]int
	Elapsed  time.Duration
	DumpDir  string // when set: each object with a disagreement, both sides' answers, as files
	// Admissions kept for checks beyond agreement (controller cases).
	Admissions []Admissions
}

// NewDifferential starts a run against a table.
func NewDifferential(t *FeatureTable) *Differential {
	d := &Differential{Table: t, Tallies: map[string]*Tally{}, Skipped: map[string]int{}}
	for _, f := range t.Features {
		d.Tallies[f.ID] = &Tally{}
	}
	return d
}

func (d *Differential) tally(id string) *Tally {
	if d.Tallies[id] == nil {
		d.Tallies[id] = &Tally{}
	}
	return d.Tallies[id]
}

func (d *Differential) disagree(name, id, what string) {
	d.tally(id).Disagree++
	msg := fmt.Sprintf("%s: %s: %s", name, id, what)
	if f := d.Table.feature(id); f != nil && f.Native == "partial" {
		d.Notes = append(d.Notes, msg)
		return
	}
	d.Problems = append(d.Problems, msg)
}

// Pair is the two chains an object goes through.
type Pair struct {
	Webhook, Native *Environment
}

// Admissions are one object's four admissions: each side, and each side again on what it
// stored (idempotence).
type Admissions struct {
	Name                      string
	Request                   Request
	Webhook, Native           Side
	WebhookAgain, NativeAgain *Side // nil when the first pass denied (or not run)
}

// Admit runs the object through both sides, twice. Safe to call from several goroutines (the
// plugins serve concurrent requests in the API server).
func (p Pair) Admit(name string, r Request, full bool) Admissions {
	ctx := context.Background()
	a := Admissions{Name: name, Request: r}
	a.Webhook = WebhookSide(p.Webhook.Admit(ctx, r))
	a.Native = NativeSide(p.Native.Admit(ctx, r))
	again := func(env *Environment, first Side, read func(Result) Side) *Side {
		if first.Denied {
			return nil
		}
		second := r
		second.Object = first.Object
		s := read(env.Admit(ctx, second))
		return &s
	}
	a.WebhookAgain = again(p.Webhook, a.Webhook, WebhookSide)
	if full {
		a.NativeAgain = again(p.Native, a.Native, NativeSide)
	}
	return a
}

// Record compares one object's admissions.
func (d *Differential) Record(a Admissions) {
	kind := a.Request.Object.GetObjectKind().GroupVersionKind().GroupKind().String()
	d.Objects++
	before := len(d.Problems) + len(d.Notes)
	defer func() {
		if d.DumpDir != "" && len(d.Problems)+len(d.Notes) > before {
			if err := dump(d.DumpDir, a); err != nil {
				d.Problems = append(d.Problems, a.Name+": writing the dump: "+err.Error())
			}
		}
	}()
	judged := d.Table.JudgedOnly(a.Request)
	d.compareRules(a.Name, kind, judged, a.Webhook, a.Native)
	if d.Table.Mode == "full" {
		d.compareObjects(a.Name, kind, a.Request, a.Webhook, a.Native)
		d.checkIdempotent(a.Name, "native", a.Native, a.NativeAgain)
	}
	d.checkIdempotent(a.Name, "webhook", a.Webhook, a.WebhookAgain)
}

// JudgedOnly: an object the webhook judges as mutated but never patches, which the native
// policies therefore never mutate (docs/decisions.md "Controllers converge", docs/native.md
// "Differences"): a non-Pod object with a controller, or an UPDATE of a kind whose templates
// are immutable. The native policies judge it by the fallback rules only.
func (t *FeatureTable) JudgedOnly(r Request) bool {
	kind := r.Object.GetObjectKind().GroupVersionKind().GroupKind()
	if kind.Group == "" && kind.Kind == "Pod" {
		return false
	}
	if r.Operation == admission.Update && t.Immutable[kind.String()] {
		return true
	}
	m, err := meta.Accessor(r.Object)
	return err == nil && metav1.GetControllerOf(m) != nil
}

func (d *Differential) compareRules(name, kind string, judged bool, w, n Side) {
	for _, f := range d.Table.Features {
		if f.Kind != "rule" || !f.covers(kind) {
			continue
		}
		if judged && !f.Unmutated {
			if contains(w.DenyRules, f.ID) || contains(w.WarnRules, f.ID) {
				d.Skipped["rules the native policies do not apply to objects they never mutate"]++
			}
			continue
		}
		wd, nd := contains(w.DenyRules, f.ID), contains(n.DenyRules, f.ID)
		ww, nw := contains(w.WarnRules, f.ID), contains(n.WarnRules, f.ID)
		if !(wd || nd || ww || nw) {
			continue
		}
		t := d.tally(f.ID)
		t.Concerned++
		switch {
		case d.Table.Mode == "fallback" && nd && !w.Denied:
			d.disagree(name, f.ID, "the fallback policies deny an object the webhook admits: "+n.Error)
		case d.Table.Mode == "fallback" && wd && !nd && f.Native == "yes":
			d.disagree(name, f.ID, "the webhook denies with it, the fallback policies let the object through")
		case d.Table.Mode == "fallback":
			t.Agree++
		case wd != nd:
			d.disagree(name, f.ID, fmt.Sprintf("denies: webhook %v, native %v (webhook: %s; native: %s)", wd, nd, w.Error, n.Error))
		case ww != nw:
			d.disagree(name, f.ID, fmt.Sprintf("warns: webhook %v, native %v", ww, nw))
		default:
			t.Agree++
		}
	}
	// The decision: required when every rule the webhook denied with is native "yes".
	if d.Table.Mode == "full" && w.Denied != n.Denied && d.allNative(w.DenyRules, kind) &&
		(!judged || d.allUnmutated(w.DenyRules)) {
		d.Problems = append(d.Problems, fmt.Sprintf("%s: decision: webhook denied=%v (%s), native denied=%v (%s)",
			name, w.Denied, w.Error, n.Denied, n.Error))
	}
}

func (d *Differential) allUnmutated(ids []string) bool {
	for _, id := range ids {
		if f := d.Table.feature(id); f == nil || !f.Unmutated {
			return false
		}
	}
	return true
}

func (d *Differential) allNative(ids []string, kind string) bool {
	for _, id := range ids {
		if f := d.Table.feature(id); f == nil || f.Native != "yes" || !f.covers(kind) {
			return false
		}
	}
	return true
}

func (d *Differential) compareObjects(name, kind string, r Request, w, n Side) {
	if w.Denied || n.Denied {
		return
	}
	comparable := d.allNative(w.Mutations, kind)
	if !comparable {
		for _, m := range w.Mutations {
			if f := d.Table.feature(m); f.covers(kind) {
				d.tally(m).Concerned++
				d.tally(m).NotComparable++
			}
		}
		d.Skipped["objects whose webhook mutations are not all native"]++
		return
	}
	diff, err := Diff(w.Object, n.Object)
	if err != nil {
		d.Problems = append(d.Problems, fmt.Sprintf("%s: comparing the stored objects: %v", name, err))
		return
	}
	for _, m := range w.Mutations {
		d.tally(m).Concerned++
		if len(diff) == 0 {
			d.tally(m).Agree++
		}
	}
	if len(diff) == 0 {
		return
	}
	what := "stored objects differ (webhook -> native): " + strings.Join(diff, "; ")
	if len(w.Mutations) == 0 {
		d.Problems = append(d.Problems, name+": the native policies changed an object the webhook left alone: "+what)
		return
	}
	for _, m := range w.Mutations {
		d.disagree(name, m, what)
	}
}

// dump writes an object's request and both sides' answers (input.yaml, webhook.yaml,
// native.yaml, with the decision in a comment) for reading a disagreement.
func dump(dir string, a Admissions) error {
	name := strings.NewReplacer("/", "_", " ", "_", "(", "", ")", "").Replace(a.Name)
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	write := func(file, header string, obj runtime.Object) error {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(path, file), append([]byte(header), data...), 0o644)
	}
	decision := func(s Side) string {
		if s.Denied {
			return "# denied: " + s.Error + "\n"
		}
		return "# admitted; mutations: " + strings.Join(s.Mutations, ",") + "\n"
	}
	if err := write("input.yaml", "# "+string(a.Request.Operation)+"\n", a.Request.Object); err != nil {
		return err
	}
	if err := write("webhook.yaml", decision(a.Webhook), a.Webhook.Object); err != nil {
		return err
	}
	return write("native.yaml", decision(a.Native), a.Native.Object)
}

// checkIdempotent: the stored object admitted again changes nothing and is not denied.
func (d *Differential) checkIdempotent(name, side string, first Side, second *Side) {
	if first.Denied || second == nil {
		return
	}
	t := d.tally("(idempotence, " + side + ")")
	t.Concerned++
	if second.Denied {
		t.Disagree++
		d.Problems = append(d.Problems, fmt.Sprintf("%s: %s, second pass: denied: %s", name, side, second.Error))
		return
	}
	diff, err := Diff(first.Object, second.Object)
	if err != nil || len(diff) > 0 {
		t.Disagree++
		d.Problems = append(d.Problems, fmt.Sprintf("%s: %s, second pass changed the stored object: %v %s",
			name, side, err, strings.Join(diff, "; ")))
		return
	}
	t.Agree++
}

// Merge adds another run's counts (another policy's objects) to d.
func (d *Differential) Merge(o *Differential) {
	d.Objects += o.Objects
	d.Elapsed += o.Elapsed
	for id, t := range o.Tallies {
		mine := d.tally(id)
		mine.Concerned += t.Concerned
		mine.Agree += t.Agree
		mine.Disagree += t.Disagree
		mine.NotComparable += t.NotComparable
		if d.Table.feature(id) == nil {
			if f := o.Table.feature(id); f != nil {
				d.Table.Features = append(d.Table.Features, *f)
			}
		}
	}
	for k, n := range o.Skipped {
		d.Skipped[k] += n
	}
	d.Problems = append(d.Problems, o.Problems...)
	d.Notes = append(d.Notes, o.Notes...)
}

// Report prints the agreement per feature; it returns false on a disagreement.
func (d *Differential) Report(w *strings.Builder) bool {
	fmt.Fprintf(w, "differential (%s): %d objects, each admitted twice on each side (%.1f s)\n",
		d.Table.Mode, d.Objects, d.Elapsed.Seconds())
	fmt.Fprintf(w, "  %-24s %-8s %-7s %9s %7s %9s %14s\n", "feature", "kind", "native", "concerned", "agree", "disagree", "not comparable")
	ids := make([]string, 0, len(d.Tallies))
	for id := range d.Tallies {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t := d.Tallies[id]
		kind, native := "", ""
		if f := d.Table.feature(id); f != nil {
			kind, native = f.Kind, f.Native
		}
		fmt.Fprintf(w, "  %-24s %-8s %-7s %9d %7d %9d %14d\n", id, kind, native, t.Concerned, t.Agree, t.Disagree, t.NotComparable)
	}
	for reason, n := range d.Skipped {
		fmt.Fprintf(w, "  not compared: %d %s\n", n, reason)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(w, "  partial: %s\n", n)
	}
	for _, p := range d.Problems {
		fmt.Fprintf(w, "  DISAGREE %s\n", p)
	}
	return len(d.Problems) == 0
}
