#!/usr/bin/env python3
"""Fails when a test file keeps its tests or helpers in an anonymous namespace.

One-off builds (CI's, scripts/sanitized_tests.sh) compile the test files in batches (a unity
build, TANDEM_UNITY_BUILD): a batch is one translation unit, so two files' anonymous namespaces
become one, and two helpers of the same name (every file has its `profile()`) no longer compile.
Each tests/*_test.cpp therefore keeps what it defines in a namespace named after the file
(`namespace sim_core_test {` in sim_core_test.cpp), which no other file opens. An everyday build
compiles each file on its own and would not notice; this check does, in the Release suite.

    scripts/check_test_namespaces.py [--root DIR]   check tests/ (exit 1 on a violation)
    scripts/check_test_namespaces.py --self-test     check the checker on made-up files
"""
import argparse
import os
import re
import sys
import tempfile

TEST_FILE = re.compile(r"^(?P<stem>\w+_test)\.cpp$")
ANONYMOUS = re.compile(r"^\s*namespace\s*\{")
NAMED = re.compile(r"^\s*namespace\s+(?P<name>[\w:]+)\s*\{")


def violations(tests_dir):
    """(file, line number, message) for each anonymous namespace, and for a file-named namespace
    opened in another file than its own."""
    found = []
    # The tests are laid out by layer (tests/sim, tests/kernels, ...): every folder below.
    paths = sorted(os.path.relpath(os.path.join(d, n), tests_dir)
                   for d, _, names in os.walk(tests_dir) for n in names)
    for name in paths:
        match = TEST_FILE.match(os.path.basename(name))
        if not match:
            continue
        stem = match.group("stem")
        others = set()
        with open(os.path.join(tests_dir, name), encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if ANONYMOUS.match(line):
                    found.append((name, number, f"an anonymous namespace: name it after the file "
                                                f"(`namespace {stem} {{`), since one-off builds "
                                                f"compile test files in batches"))
                named = NAMED.match(line)
                if named:
                    last = named.group("name").split("::")[-1]
                    if last.endswith("_test") and last != stem:
                        others.add((number, last))
        for number, last in sorted(others):
            found.append((name, number, f"opens `{last}`, another test file's namespace: "
                                        f"use `{stem}`"))
    return found


def self_test():
    cases = {
        "clean_test.cpp": "namespace tandem {\nnamespace clean_test {\nTEST(A, B) {}\n}\n}\n",
        "anon_test.cpp": "namespace tandem {\nnamespace {\nint profile() { return 1; }\n}\n}\n",
        "borrow_test.cpp": "namespace tandem::host {\nnamespace clean_test {\n}\n}\n",
        "helper.hpp": "namespace {\n}\n",  # not a test file: headers are not batched
    }
    with tempfile.TemporaryDirectory() as root:
        for name, text in cases.items():
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        found = violations(root)
    got = sorted((name, number) for name, number, _ in found)
    want = [("anon_test.cpp", 2), ("borrow_test.cpp", 2)]
    if got != want:
        print(f"self-test FAILED: found {got}, expected {want}")
        return 1
    print("self-test: the checker finds an anonymous namespace and a borrowed file namespace")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    tests_dir = os.path.normpath(os.path.join(args.root, "tests"))
    found = violations(tests_dir)
    for name, number, message in found:
        print(f"tests/{name}:{number}: {message}")
    if found:
        return 1
    print(f"test namespaces: every tests/**/*_test.cpp keeps its own ({tests_dir})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
