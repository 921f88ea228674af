package main

// The tenant-attack suite (tests/tenant_attacks/cases/NNN-slug.yaml, docs/security.md): each
// file is the AdmissionRequest a tenant would send to get around the policy. The differential
// sends the ones admitted under the generated objects' policy (tests/cases/policy.yaml, the
// cases without a `policy:` of their own) and needing no claim lookup through the webhook and
// through the native policies, with their operation, old object and user.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
	req       Request
}

// LoadAttackCases reads every case of dir that the differential can send: CREATE or UPDATE of
// the object itself (no subresource), under the default policy, without claims or nodes (the
// harness serves no API to look them up). The rest are skipped, each with why in `skipped`.
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
	case f.Policy != "" && f.Policy != "tests/cases/policy.yaml":
		return "a policy of its own"
	case len(f.Claims) > 0:
		return "claims (the webhook finds them only through --dra-lookup)"
	case len(f.Nodes) > 0:
		return "nodes (the webhook finds them only through its Node watch)"
	case f.Request.SubResource != "":
		return "a subresource"
	case f.Request.Operation != "CREATE" && f.Request.Operation != "UPDATE":
		return "operation " + f.Request.Operation
	}
	return ""
}

func attackOf(name string, f *attackFile) (attackRequest, error) {
	a := attackRequest{name: name, namespace: f.Request.Namespace}
	obj, err := Decode(f.Request.Object)
	if err != nil {
		return a, fmt.Errorf("object: %w", err)
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
