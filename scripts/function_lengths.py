#!/usr/bin/env python3
"""Lists the longest C++ functions and the largest files (docs/architecture.md, "Size").

    scripts/function_lengths.py [--top N] [--over LINES] [PATH...]

A brace counter, not a parser: comments, strings, character literals and preprocessor directives
are blanked, then a `{` whose header (the text since the last `;`, `{` or `}`) has a parameter
list and is not a control statement, a class, a namespace or an initializer opens a function; its
length is the lines from the header's first line to the closing `}`. Lambdas and local classes
count toward the function that holds them; member functions defined inside a class body count on
their own. A function longer than --over lines passes when the comment block right above it (or
on its header) says why, with `long:` (e.g. `// long: one table, one case per kind`); --over
makes the script exit 1 naming the others. With no PATH it scans SOURCE_DIRS, every library
folder (a CTest test, tests/size/function_lengths_test.py, keeps that list equal to
CMakeLists.txt's).
"""
import argparse
import os
import re
import sys

SOURCE_DIRS = ["audit", "certs", "cli", "engine", "fleet", "kube", "lint", "mutators", "policies",
               "policytest", "render", "rules", "webhook", "xml", "yaml"]
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else|return|case)\b")
NOT_FUNCTION = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")


def blank(text):
    """Comments, literals and preprocessor directives replaced by spaces (newlines kept, so line
    numbers hold). A directive (`#if defined(X)`, `#if __has_include(<h>)`, a `#define` with its
    `\\` continuations) is no code: its parentheses and braces would otherwise read as a
    function."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#" and text[text.rfind("\n", 0, i) + 1:i].strip() == "":
            j = i
            while True:
                j = text.find("\n", j)
                if j < 0 or text[j - 1] != "\\":
                    break
                j += 1
            j = n if j < 0 else j
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    raw = open(path, encoding="utf-8", errors="replace").read()
    text = blank(raw)
    raw_lines = raw.split("\n")
    found = []
    stack = []  # per open brace: (is_function, start_line, name, header_start_offset)
    header_start = 0
    in_function = 0
    for i, c in enumerate(text):
        if c == "{":
            header = text[header_start:i]
            is_fn = False
            name = ""
            if not in_function:
                h = " ".join(header.split())
                m = re.search(r"([~\w:<>]+)\s*\([^{}]*\)[^(){}]*$", h)
                if (m and not CONTROL.match(h) and not NOT_FUNCTION.search(h.split("(")[0] + " ")
                        and not h.rstrip().endswith("=") and "=" not in h.split("(")[0]):
                    is_fn = True
                    name = m.group(1)
            first = text.count("\n", 0, header_start + len(header) - len(header.lstrip())) + 1
            stack.append((is_fn, first, name))
            if is_fn:
                in_function += 1
            header_start = i + 1
        elif c == "}":
            if stack:
                is_fn, first, name = stack.pop()
                if is_fn:
                    in_function -= 1
                    last = text.count("\n", 0, i) + 1
                    above = raw_lines[max(0, first - 6):first]
                    reason = any("long:" in line for line in above)
                    found.append((last - first + 1, path, first, name, reason))
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
        elif c == ":" and not in_function:
            # `public:` / `private:` labels end a header; `a::b` does not.
            if text[i - 1] != ":" and (i + 1 >= len(text) or text[i + 1] != ":"):
                prev = text[header_start:i].strip()
                if prev in ("public", "private", "protected"):
                    header_start = i + 1
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--over", type=int, default=0)
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    root = os.environ.get("ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = args.paths or [os.path.join(root, d) for d in SOURCE_DIRS]
    files = []
    for p in paths:
        if not os.path.exists(p):
            continue
        if os.path.isdir(p):
            for dirpath, _, names in os.walk(p):
                files += [os.path.join(dirpath, f) for f in names if f.endswith((".cc", ".h"))]
        else:
            files.append(p)
    all_fns = []
    sizes = []
    for f in sorted(files):
        all_fns += functions(f)
        sizes.append((sum(1 for _ in open(f, encoding="utf-8", errors="replace")), f))
    rel = lambda p: os.path.relpath(p, root)
    print(f"longest functions (of {len(all_fns)}):")
    for length, path, line, name, reason in sorted(all_fns, reverse=True)[: args.top]:
        print(f"  {length:5}  {rel(path)}:{line}  {name}{'  (long: reason given)' if reason else ''}")
    print(f"largest files (of {len(sizes)}):")
    for lines, path in sorted(sizes, reverse=True)[: args.top]:
        print(f"  {lines:5}  {rel(path)}")
    if args.over:
        bad = [f for f in all_fns if f[0] > args.over and not f[4]]
        for length, path, line, name, _ in sorted(bad, reverse=True):
            print(f"{rel(path)}:{line}: {name} is {length} lines (over {args.over}, no `long:` reason)",
                  file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
