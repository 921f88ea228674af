#!/usr/bin/env python3
"""Self-test of scripts/function_lengths.py (the CTest "size:" tests rely on it).

    tests/size/function_lengths_test.py

Runs the script on the fixtures beside this file and compares its exact output and exit code:
fixtures/preprocessor.cc holds `#if defined(...)`, `#if __has_include(...)` and a multi-line
`#define` (none of them a function), fixtures/long.cc a 60-line function (passes), a 61-line one
(fails) and a 61-line one with a `// long:` reason (passes). Checks too that the folders the
script scans by default (SOURCE_DIRS, what the CTest size test runs on) are the libraries the
top-level CMakeLists.txt adds, so a new folder is not left out. Prints what differs; exits 1 if
anything does.
"""
import importlib.util
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "scripts", "function_lengths.py")

CASES = [
    (
        "preprocessor.cc",
        0,
        """longest functions (of 2):
      6  tests/size/fixtures/preprocessor.cc:23  scan
      1  tests/size/fixtures/preprocessor.cc:31  mapped
largest files (of 1):
     34  tests/size/fixtures/preprocessor.cc
""",
        "",
    ),
    (
        "long.cc",
        1,
        """longest functions (of 3):
     61  tests/size/fixtures/long.cc:128  sixty_one_lines_with_reason  (long: reason given)
     61  tests/size/fixtures/long.cc:65  sixty_one_lines
     60  tests/size/fixtures/long.cc:4  sixty_lines
largest files (of 1):
    189  tests/size/fixtures/long.cc
""",
        "tests/size/fixtures/long.cc:65: sixty_one_lines is 61 lines (over 60, no `long:` reason)\n",
    ),
]


def source_dirs_differ():
    """The script's default folders against the top-level CMakeLists.txt's unconditional
    add_subdirectory() calls (bench/, tests/ and fuzz/ are added under an if())."""
    spec = importlib.util.spec_from_file_location("function_lengths", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        added = re.findall(r"^add_subdirectory\((\w+)\)", f.read(), re.MULTILINE)
    if sorted(module.SOURCE_DIRS) == sorted(added):
        return 0
    print(f"SOURCE_DIRS differs from CMakeLists.txt's folders\n--- want\n{sorted(added)}\n"
          f"--- got\n{sorted(module.SOURCE_DIRS)}")
    return 1


def main():
    failed = source_dirs_differ()
    env = dict(os.environ, ROOT=ROOT)
    for fixture, want_rc, want_out, want_err in CASES:
        path = os.path.join(HERE, "fixtures", fixture)
        run = subprocess.run([sys.executable, SCRIPT, "--top", "100", "--over", "60", path],
                             capture_output=True, text=True, env=env)
        for what, got, want in (("exit code", run.returncode, want_rc),
                                ("stdout", run.stdout, want_out), ("stderr", run.stderr, want_err)):
            if got != want:
                failed += 1
                print(f"{fixture}: {what} differs\n--- want\n{want}\n--- got\n{got}")
    print("ok" if not failed else f"{failed} difference(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
