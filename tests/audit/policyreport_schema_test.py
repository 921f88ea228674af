#!/usr/bin/env python3
"""gpuadmit audit's PolicyReports against the wgpolicyk8s.io/v1alpha2 types.

The schema below is written by hand from the Go types the CRD is generated from
(kubernetes-sigs/wg-policy-prototypes, policy-report/apis/wgpolicyk8s.io/v1alpha2/
policyreport_types.go): every field with its type and enums (PolicyResult:
pass|fail|warn|error|skip; PolicyResultSeverity: critical|high|low|medium|info), `policy`
required in a result, corev1.ObjectReference for `scope` and `resources`, metav1.Timestamp for
`timestamp`, properties a map of strings; unknown fields are refused, since the API server would
prune them. The test runs the binary on tests/audit/data/export.yaml and validates every report,
then shows the schema refusing a wrong result and an unknown field.

usage: policyreport_schema_test.py GPUADMIT_BINARY SOURCE_DIR
"""
import copy
import json
import subprocess
import sys

import jsonschema

OBJECT_REFERENCE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {k: {"type": "string"} for k in
                   ["apiVersion", "fieldPath", "kind", "name", "namespace", "resourceVersion", "uid"]},
}
RESULT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["policy"],
    "properties": {
        "source": {"type": "string"},
        "policy": {"type": "string"},
        "rule": {"type": "string"},
        "category": {"type": "string"},
        "severity": {"enum": ["critical", "high", "low", "medium", "info"]},
        "timestamp": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"seconds": {"type": "integer"}, "nanos": {"type": "integer"}},
        },
        "result": {"enum": ["pass", "fail", "warn", "error", "skip"]},
        "scored": {"type": "boolean"},
        "resources": {"type": "array", "items": OBJECT_REFERENCE},
        "resourceSelector": {"type": "object"},
        "message": {"type": "string"},
        "properties": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
REPORT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata"],
    "properties": {
        "apiVersion": {"const": "wgpolicyk8s.io/v1alpha2"},
        "kind": {"enum": ["PolicyReport", "ClusterPolicyReport"]},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "namespace": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "scope": OBJECT_REFERENCE,
        "scopeSelector": {"type": "object"},
        "summary": {
            "type": "object",
            "additionalProperties": False,
            "properties": {k: {"type": "integer", "minimum": 0}
                           for k in ["pass", "fail", "warn", "error", "skip"]},
        },
        "results": {"type": "array", "items": RESULT},
    },
}


def main():
    binary, source = sys.argv[1], sys.argv[2]
    data = source + "/tests/audit/data"
    run = subprocess.run([binary, "audit", "--policy", data + "/policy.yaml", "--output",
                          "policyreport", data + "/export.yaml"], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    reports = json.loads(run.stdout)
    assert reports["kind"] == "List" and len(reports["items"]) == 2
    validator = jsonschema.Draft7Validator(REPORT)
    for report in reports["items"]:
        errors = list(validator.iter_errors(report))
        assert not errors, [e.message for e in errors]
        summary = report["summary"]
        counted = {k: sum(1 for r in report["results"] if r["result"] == k) for k in summary}
        assert counted == summary, (counted, summary)  # under the bound, every result is listed
    # The schema refuses what the API server would refuse or prune.
    bad = copy.deepcopy(reports["items"][0])
    bad["results"][0]["result"] = "deny"
    assert list(validator.iter_errors(bad)), "a result outside the enum must fail"
    bad = copy.deepcopy(reports["items"][0])
    bad["results"][0]["ownedObjects"] = "3"
    assert list(validator.iter_errors(bad)), "an unknown result field must fail"
    print("ok: %d reports valid" % len(reports["items"]))


if __name__ == "__main__":
    main()
