#!/usr/bin/env python3
"""Every path the architecture page and the README name exists in the tree, every relative link
of them and of docs/labs.md (the index of each lab's files) resolves, and the architecture page's
layout lists the tree's top level.

docs/architecture.md describes the layout; a path in backticks there (`grader/src/handin.cpp`,
`gpulab/grade/kit.hpp`, `common/emu/src/`) must be a file or folder of the repository (include
paths are looked up in the include folders). Placeholders (NN-name, <lab>, *) and bare folder
names (`stub/`) are not paths of the tree. The code block of its "## Layout" section names a path
at the start of each entry line (and more after it: `docs/figures/*.svg`, packages.txt): each must
exist, and every entry at the top of the tree that git tracks must be named there (dotfiles of
tools such as .gitignore and .clang-format aside). Usage: doc_paths_test.py REPO_ROOT
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


def broken_links(root, page):
    """Relative Markdown links of a page ([text](path)) whose target is not in the tree."""
    text = open(os.path.join(root, page), encoding="utf-8").read()
    here = os.path.dirname(os.path.join(root, page))
    return [target for target in re.findall(r"\]\(([^)#\s]+)[^)]*\)", text)
            if not target.startswith(("http:", "https:", "mailto:"))
            and not os.path.exists(os.path.normpath(os.path.join(here, target)))]


def layout_problems(root):
    """What the layout block of docs/architecture.md gets wrong about the tree."""
    text = open(os.path.join(root, "docs/architecture.md"), encoding="utf-8").read()
    m = re.search(r"^## Layout\n.*?^```\n(.*?)^```", text, re.S | re.M)
    if not m:
        return ["docs/architecture.md has no \"## Layout\" section with a code block"]
    problems, named = [], set()
    for line in m.group(1).splitlines():
        if not line or line.startswith(" "):
            continue
        for entry in re.split(r",\s*", line.split("  ")[0].strip()):
            bare = entry.rstrip("/")
            named.add(bare.split("/")[0])
            if not os.path.exists(os.path.join(root, bare)):
                problems.append(f"docs/architecture.md, Layout: `{entry}` is not in the tree")
    import subprocess
    tracked = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True).stdout.split("\n")
    top = {t.split("/")[0] for t in tracked if t and not t.startswith('"')}
    for entry in sorted(top - named - {".gitignore", ".clang-format"}):
        problems.append(f"docs/architecture.md, Layout: the tree's top level has `{entry}`, which the layout does not name")
    return problems


def main():
    root = sys.argv[1]
    bad = 0
    for page in ["docs/architecture.md", "README.md"]:
        for path in missing_paths(root, page):
            print(f"{page}: names `{path}`, which is not in the tree")
            bad += 1
    for page in ["docs/labs.md", "README.md", "docs/architecture.md"]:
        for target in broken_links(root, page):
            print(f"{page}: links {target}, which is not in the tree")
            bad += 1
    for problem in layout_problems(root):
        print(problem)
        bad += 1
    if bad:
        return 1
    print("doc_paths: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
