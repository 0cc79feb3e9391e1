#!/usr/bin/env python3
"""Every path the architecture page and the README name exists in the tree.

docs/architecture.md describes the layout; a path in backticks there (`grader/src/handin.cpp`,
`gpulab/grade/kit.hpp`, `common/emu/src/`) must be a file or folder of the repository (include
paths are looked up in the include folders). Placeholders (NN-name, <lab>, *) and bare folder
names (`stub/`) are not paths of the tree. Usage: doc_paths_test.py REPO_ROOT
"""
import os
import re
import sys

INCLUDE_DIRS = ["common/include", "common/emu/include", "grader/common"]


def missing_paths(root, page):
    text = open(os.path.join(root, page), encoding="utf-8").read()
    missing = []
    for path in sorted(set(re.findall(r"`([A-Za-z0-9_./-]+/[A-Za-z0-9_./-]*)`", text))):
        if "NN" in path or path.count("/") == 1 and path.endswith("/") or path.startswith(("http", "/")):
            continue
        bare = path.rstrip("/")
        if bare.startswith("gpulab/"):
            found = any(os.path.exists(os.path.join(root, d, bare)) for d in INCLUDE_DIRS)
        else:
            found = os.path.exists(os.path.join(root, bare))
        if not found:
            missing.append(path)
    return missing


def main():
    root = sys.argv[1]
    bad = 0
    for page in ["docs/architecture.md", "README.md"]:
        for path in missing_paths(root, page):
            print(f"{page}: names `{path}`, which is not in the tree")
            bad += 1
    if bad:
        return 1
    print("doc_paths: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
