#!/usr/bin/env python3
"""A policy of N tenants for the native scale measurements (docs/performance.md, "Native
policies"; scripts/native-test.sh tenants).

    scripts/native-tenants.py N [POLICY]   # POLICY defaults to tests/cases/policy.yaml

N = 1: POLICY with its first tenant only. N > 1: POLICY's own tenants, after N minus their number
generated tenants, each of one literal namespace (team-0001, ...) that no golden case uses, with
values of their own (classes, limits, quota, defaults, priority, every tenth in audit mode, every
seventh with a rule action of its own), so that no two records are alike and the golden cases
keep their answers. Prints the policy on stdout.
"""
import re
import sys

CLASSES = ["a100", "h100", "l4", "t4"]
PRIORITIES = ["gpu-batch", "gpu-training", "gpu-inference"]


def generated(i):
    cls = CLASSES[i % len(CLASSES)]
    allowed = sorted({cls, CLASSES[(i + 1) % len(CLASSES)]})
    lines = [
        f"    - name: team-{i:04d}",
        f'      namespaces: ["team-{i:04d}"]',
        f"      defaultClass: {cls}",
        f"      allowedClasses: [{', '.join(allowed)}]",
        "      defaults:",
        f'        request: {{cpu: "{1 + i % 4}", memory: {4 + i % 16}Gi}}',
        f"        limit: {{memory: {32 + i % 32}Gi}}",
        f'        perGPU: {{cpu: "{2 + i % 6}", memory: {8 + i % 40}Gi}}',
        f"      limits: {{maxGPUsPerContainer: {1 + i % 8}, maxGPUsPerPod: {1 + i % 8}}}",
        f"      quota: {{gpus: {8 + i % 64}}}",
        f"      priority: {{default: {PRIORITIES[i % len(PRIORITIES)]}}}",
    ]
    if i % 10 == 0:
        lines.append("      enforcement: {mode: audit}")
    elif i % 7 == 0:
        lines.append("      enforcement: {rules: {GPU014: deny}}")
    return lines


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    n = int(sys.argv[1])
    path = sys.argv[2] if len(sys.argv) == 3 else "tests/cases/policy.yaml"
    lines = open(path, encoding="utf-8").read().split("\n")
    start = lines.index("  tenants:") + 1
    end = start
    while end < len(lines) and (lines[end].startswith("    ") or lines[end].strip() == ""):
        end += 1
    own = lines[start:end]
    heads = [k for k, line in enumerate(own) if re.match(r"    - name: ", line)]
    if n < 1:
        sys.exit("native-tenants: N must be at least 1")
    if n == 1:
        tenants = own[: heads[1]] if len(heads) > 1 else own
    else:
        tenants = []
        for i in range(1, max(0, n - len(heads)) + 1):
            tenants += generated(i)
        tenants += own
    sys.stdout.write("\n".join(lines[:start] + tenants + lines[end:]))


if __name__ == "__main__":
    main()
