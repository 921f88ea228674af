package main

// The tenant-attack suite (tests/tenant_attacks/cases/NNN-slug.yaml, docs/security.md): each
// file is the AdmissionRequest a tenant would send to get around the policy. The differential
// sends each one under its own policy (`policy:`, else tests/cases/policy.yaml) through the
// webhook and through the native policies, with its operation, old object and user. A case's
// `claims:` and `nodes:` are what the suite's webhook finds through its DRA lookup and Node watch;
// neither side of the differential looks anything up, so both judge the object without them.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/yaml"
)

// attackFile is the part of a case file the differential reads.
type attackFile struct {
	Policy  string            `json:"policy"`
	Claims  []json.RawMessage `json:"claims"`
	Nodes   []json.RawMessage `json:"nodes"`
	Request struct {
		Operation   string          `json:"operation"`
		Namespace   string          `json:"namespace"`
		SubResource string          `json:"subResource"`
		Object      json.RawMessage `json:"object"`
		OldObject   json.RawMessage `json:"oldObject"`
		UserInfo    *struct {
			Username string   `json:"username"`
			Groups   []string `json:"groups"`
		} `json:"userInfo"`
	} `json:"request"`
}

// attackRequest is one attack the differential can send.
type attackRequest struct {
	name      string
	namespace string
	policy    string // absolute
	req       Request
}

// LoadAttackCases reads every case of dir that the differential can send: CREATE or UPDATE of
// the object itself (no subresource; the native policies do not match subresources). The rest
// are skipped, each with why in `skipped`. Relative policy paths are the repository's, as the
// suite's driver reads them: run from the repository's root.
func LoadAttackCases(dir string) (cases []attackRequest, skipped []string, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	for _, file := range files {
		name := "attack " + strings.TrimSuffix(filepath.Base(file), ".yaml")
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, err
		}
		var f attackFile
		if err := yaml.Unmarshal(data, &f); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		if why := attackSkip(&f); why != "" {
			skipped = append(skipped, name+": "+why)
			continue
		}
		a, err := attackOf(name, &f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		cases = append(cases, a)
	}
	return cases, skipped, nil
}

func attackSkip(f *attackFile) string {
	switch {
	case f.Request.SubResource != "":
		return "a subresource"
	case f.Request.Operation != "CREATE" && f.Request.Operation != "UPDATE":
		return "operation " + f.Request.Operation
	}
	return ""
}

func attackOf(name string, f *attackFile) (attackRequest, error) {
	a := attackRequest{name: name, namespace: f.Request.Namespace, policy: f.Policy}
	if a.policy == "" {
		a.policy = "tests/cases/policy.yaml"
	}
	var err error
	if a.policy, err = filepath.Abs(a.policy); err != nil {
		return a, err
	}
	if len(f.Claims) > 0 || len(f.Nodes) > 0 {
		a.name += " (no lookups: its claims and nodes unknown to both sides)"
	}
	obj, err := Decode(f.Request.Object)
	if err != nil {
		return a, fmt.Errorf("object: %w", err)
	}
	// As for the golden cases (cases.go): a custom resource's kind gets its stand-in OpenAPI
	// model, or the mutating policies' type converter finds no kind (TrainJob, AppWrapper).
	if _, custom := obj.(*unstructured.Unstructured); custom {
		RegisterCustomKind(obj.GetObjectKind().GroupVersionKind())
	}
	a.req = Request{Object: obj, Operation: admission.Operation(f.Request.Operation)}
	if len(f.Request.OldObject) > 0 && string(f.Request.OldObject) != "null" {
		if a.req.OldObject, err = Decode(f.Request.OldObject); err != nil {
			return a, fmt.Errorf("oldObject: %w", err)
		}
	}
	// The suite's default sender (tests/tenant_attacks/tenant_attacks_test.cpp): a tenant user.
	a.req.User = &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}
	if u := f.Request.UserInfo; u != nil {
		a.req.User = &user.DefaultInfo{Name: u.Username, Groups: u.Groups}
	}
	if a.namespace == "" {
		m, err := metaOf(obj)
		if err != nil {
			return a, err
		}
		a.namespace = m.GetNamespace()
	}
	return a, nil
}
