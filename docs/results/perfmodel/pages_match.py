#!/usr/bin/env python3
"""The performance model's pages are what the model prints now: gpulab-perfmodel-predict (the
grader's model, the only one) re-makes every number of them from the kept tables, and this checks
it, so a change to the model that moves a published number fails until the pages are re-written.

    python3 docs/results/perfmodel/pages_match.py [--predict EXE]

- perfmodel-sgemm-h200.md: model.py on the ladder's counts at 256^3 and nvcc's resources, the
  whole page byte for byte; its tables (the ladder, the L2 latencies) also in perfmodel.md;
- perfmodel-other-gpus.md: `other_gpus.py ladder` (the ladder on the H200, RTX 4090 and MI300X)
  and `other_gpus.py occupancy` on the kept gfx940 table, each line of their tables in the page;
- perfmodel.md: compare_ncu.py's table (the model's warp instructions against Nsight Compute's).

Exits 1 on the first page that differs, with a diff.
"""
import difflib
import io
import os
import sys
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_ncu  # noqa: E402
import model  # noqa: E402
import other_gpus  # noqa: E402

RESULTS = os.path.join(model.ROOT, "docs", "results")


def output(main, argv):
    """What a script's main prints with sys.argv = argv."""
    saved, out = sys.argv, io.StringIO()
    sys.argv = argv
    try:
        with redirect_stdout(out):
            rc = main()
    finally:
        sys.argv = saved
    if rc:
        sys.exit("%s exited %s" % (argv, rc))
    return out.getvalue()


def page(name):
    with open(os.path.join(RESULTS, name)) as f:
        return f.read()


def lines_in(generated, name, what):
    """The generated table lines ("| ..." rows) that the page lacks; prints them."""
    text = page(name)
    missing = [l for l in generated.splitlines() if l.startswith("|") and l not in text.splitlines()]
    rows = sum(l.startswith("|") for l in generated.splitlines())
    print("%s: %s, %d of %d table lines in the page" % (name, what, rows - len(missing), rows))
    for l in missing:
        print("  not in the page: " + l)
    return not missing and rows > 0


def main():
    exe, _ = model.predictor(sys.argv)
    counts = os.path.join(RESULTS, "perfmodel-ladder-counts-256.tsv")
    ok = True

    sgemm = output(model.main, ["model.py", "--predict", exe, counts, os.path.join(RESULTS, "perfmodel-ladder-resources.tsv")])
    kept = page("perfmodel-sgemm-h200.md")
    same = sgemm == kept
    print("perfmodel-sgemm-h200.md: model.py's output, %s" % ("the same" if same else "DIFFERENT:"))
    if not same:
        sys.stdout.writelines(difflib.unified_diff(kept.splitlines(True), sgemm.splitlines(True), "kept", "now"))
    ok &= same
    ok &= lines_in(sgemm, "perfmodel.md", "model.py's tables")

    ok &= lines_in(output(other_gpus.main, ["other_gpus.py", "--predict", exe, "ladder"]),
                   "perfmodel-other-gpus.md", "other_gpus.py ladder")
    ok &= lines_in(output(other_gpus.main, ["other_gpus.py", "--predict", exe, "occupancy",
                                            os.path.join(RESULTS, "perfmodel-ladder-resources-gfx940.tsv")]),
                   "perfmodel-other-gpus.md", "other_gpus.py occupancy (the kept gfx940 table)")
    ok &= lines_in(output(compare_ncu.main, ["compare_ncu.py", "--predict", exe, counts,
                                             os.path.join(RESULTS, "perfmodel-ncu-ladder-h200.tsv")]),
                   "perfmodel.md", "compare_ncu.py")
    print("all pages as the model prints them" if ok else "a page differs from what the model prints now")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
