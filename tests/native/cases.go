package main

// The golden cases (tests/cases/<NNN-name>/, docs/golden-cases.md): input.yaml, optional
// expected.yaml (absent: unchanged or denied), optional findings.json, optional policy.yaml
// (else tests/cases/policy.yaml), optional claims.yaml, optional request.yaml (the
// AdmissionRequest's userInfo around the input, as tests/cases/cases_test.cpp feeds it).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/yaml"
)

// Finding is one entry of findings.json.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Message  string `json:"message"`
}

// Case is one golden case.
type Case struct {
	Name      string
	Dir       string
	Input     runtime.Object
	Expected  runtime.Object // the object after the mutating webhook (the input when unchanged)
	Findings  []Finding
	Policy    string // the policy file
	Namespace string
	HasClaims bool // claims.yaml: the webhook finds these claims only through --dra-lookup
	// User: request.yaml's userInfo (nil without one: the harness's own user, a tenant's as in
	// lint), e.g. system:kube-scheduler creating its extended-resource claim (case 101).
	User user.Info
	// Undecodable: why the API server would refuse the input before admission (an object its
	// type cannot hold, e.g. containers as a string: 400 Bad Request from the decoder).
	Undecodable string
}

// Denied is whether the webhook denies the case: a finding that is not a warning.
func (c *Case) Denied() bool {
	for _, f := range c.Findings {
		if f.Severity != "warn" {
			return true
		}
	}
	return false
}

// LoadCases reads every case folder under dir, sorted by name.
func LoadCases(dir string) ([]*Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var cases []*Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c, err := loadCase(dir, e.Name())
		if err != nil {
			return nil, fmt.Errorf("golden case %s: %w", e.Name(), err)
		}
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	if len(cases) == 0 {
		return nil, fmt.Errorf("no golden case under %s", dir)
	}
	return cases, nil
}

func loadCase(root, name string) (*Case, error) {
	c := &Case{Name: name, Dir: filepath.Join(root, name), Policy: filepath.Join(root, "policy.yaml")}
	var err error
	if c.Input, err = readOne(filepath.Join(c.Dir, "input.yaml")); err != nil {
		if c.Input, err = readUnstructured(filepath.Join(c.Dir, "input.yaml"), err); err != nil {
			return nil, err
		}
	}
	c.Expected = c.Input
	if exists(filepath.Join(c.Dir, "expected.yaml")) {
		if c.Expected, err = readOne(filepath.Join(c.Dir, "expected.yaml")); err != nil {
			return nil, err
		}
	}
	if exists(filepath.Join(c.Dir, "findings.json")) {
		data, err := os.ReadFile(filepath.Join(c.Dir, "findings.json"))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &c.Findings); err != nil {
			return nil, fmt.Errorf("findings.json: %w", err)
		}
	}
	if exists(filepath.Join(c.Dir, "policy.yaml")) {
		c.Policy = filepath.Join(c.Dir, "policy.yaml")
	}
	c.HasClaims = exists(filepath.Join(c.Dir, "claims.yaml"))
	if exists(filepath.Join(c.Dir, "request.yaml")) {
		if c.User, err = readUserInfo(filepath.Join(c.Dir, "request.yaml")); err != nil {
			return nil, err
		}
	}
	if _, custom := c.Input.(*unstructured.Unstructured); custom {
		RegisterCustomKind(c.Input.GetObjectKind().GroupVersionKind())
	}
	if u, ok := c.Input.(*undecodable); ok {
		c.Undecodable = u.reason
	}
	m, err := metaOf(c.Input)
	if err != nil {
		return nil, err
	}
	c.Namespace = m.GetNamespace()
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	return c, nil
}

// readUserInfo reads request.yaml's userInfo (k8s.io/api/authentication/v1 UserInfo: username,
// groups), the fields tests/cases/cases_test.cpp reads.
func readUserInfo(path string) (user.Info, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var request struct {
		UserInfo *struct {
			Username string   `json:"username"`
			Groups   []string `json:"groups"`
		} `json:"userInfo"`
	}
	if err := yaml.UnmarshalStrict(data, &request); err != nil {
		return nil, fmt.Errorf("request.yaml: %w", err)
	}
	if request.UserInfo == nil || request.UserInfo.Username == "" {
		return nil, fmt.Errorf("request.yaml: no userInfo.username")
	}
	return &user.DefaultInfo{Name: request.UserInfo.Username, Groups: request.UserInfo.Groups}, nil
}

func readOne(path string) (runtime.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := ReadDocuments(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: %d documents, want 1", filepath.Base(path), len(docs))
	}
	obj, err := Decode(docs[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return obj, nil
}

// undecodable is an input of a built-in kind its Go type cannot hold, kept as unstructured
// with the decoder's error.
type undecodable struct {
	unstructured.Unstructured
	reason string
}

func readUnstructured(path string, decodeErr error) (runtime.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := ReadDocuments(bytes.NewReader(data))
	if err != nil || len(docs) != 1 {
		return nil, decodeErr
	}
	u := &undecodable{reason: decodeErr.Error()}
	if err := u.UnmarshalJSON(docs[0]); err != nil {
		return nil, decodeErr
	}
	return u, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// CaseNote is an entry of testdata/webhook-cases.yaml: how a case's messages read when the
// object comes through the API server, and why.
type CaseNote struct {
	Why     string      `json:"why"`
	Replace [][2]string `json:"replace"`
}

// LoadCaseNotes reads the notes and applies them to the cases' findings; a note for no case, or a
// replacement that matches no message of its case, is an error.
func LoadCaseNotes(path string, cases []*Case) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	notes := map[string]CaseNote{}
	if err := yaml.UnmarshalStrict(data, &notes); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	byName := map[string]*Case{}
	for _, c := range cases {
		byName[c.Name] = c
	}
	for name, note := range notes {
		c := byName[name]
		if c == nil {
			return fmt.Errorf("%s: no golden case %s", path, name)
		}
		for _, r := range note.Replace {
			used := false
			for i := range c.Findings {
				if strings.Contains(c.Findings[i].Message, r[0]) {
					c.Findings[i].Message = strings.ReplaceAll(c.Findings[i].Message, r[0], r[1])
					used = true
				}
			}
			if !used {
				return fmt.Errorf("%s: %s: %q is in none of its findings' messages", path, name, r[0])
			}
		}
	}
	return nil
}

// NeedsClaimLookup is whether the object's pods name DRA claims: gpuadmit resolves them only
// from the API server (serve --dra-lookup, docs/dra.md); without it every reference is
// unavailable and its findings (GPU018-GPU023 on the claims, the GPU counts) differ.
func (c *Case) NeedsClaimLookup() bool {
	content, err := ToUnstructured(c.Input)
	if err != nil {
		return false
	}
	return mentionsKey(content, "resourceClaimName") || mentionsKey(content, "resourceClaimTemplateName")
}

func mentionsKey(v interface{}, key string) bool {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, x := range t {
			if k == key || mentionsKey(x, key) {
				return true
			}
		}
	case []interface{}:
		for _, x := range t {
			if mentionsKey(x, key) {
				return true
			}
		}
	}
	return false
}

// WebhookDenial is the error text the API server returns when gpuadmit's mutating webhook
// denies: the plugin's "admission webhook %q denied the request: %s"
// (k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go ToStatusErr) around
// gpuadmit's status message (engine/admission.cc: "gpuadmit denied <Kind> <ns>/<name>: " and
// each finding that is not a warning as "<rule>: <message>", joined by "; ").
func (c *Case) WebhookDenial() string {
	var parts []string
	for _, f := range c.Findings {
		if f.Severity != "warn" {
			parts = append(parts, f.Rule+": "+f.Message)
		}
	}
	m, _ := metaOf(c.Input)
	kind := c.Input.GetObjectKind().GroupVersionKind().Kind
	// The mutating webhooks see no name yet for generateName (the registry generates it after
	// mutating admission: k8s.io/apiserver/pkg/registry/rest/create.go BeforeCreate); gpuadmit
	// names the object by its generateName then (engine/json.cc object_name).
	name := m.GetName()
	if name == "" {
		name = m.GetGenerateName()
	}
	return fmt.Sprintf("admission webhook %q denied the request: gpuadmit denied %s %s/%s: %s",
		"mutate.gpuadmit.io", kind, c.Namespace, name, strings.Join(parts, "; "))
}

// WebhookWarnings are the warnings gpuadmit returns (engine/pipeline.cc Evaluation::warnings:
// "<rule>: <message>" for each warning finding), once each: both endpoints return them and the
// API server's recorder keeps a text once.
func (c *Case) WebhookWarnings() []string {
	var out []string
	for _, f := range c.Findings {
		if f.Severity == "warn" {
			out = append(out, f.Rule+": "+f.Message)
		}
	}
	return out
}
