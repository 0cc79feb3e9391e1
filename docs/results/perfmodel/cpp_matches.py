#!/usr/bin/env python3
"""The grader's performance model (C++, gpulab/grade/perfmodel.hpp, which grades lab 06 on the
emulator) against docs/results/perfmodel/model.py's predict_v1 (the research tool the tables in
docs/results come from), on the SGEMM ladder's kept counts: the same time and the same bound for
every step, at both counting sizes, on every GPU model.py has parameters for (each with its
compiler's registers: other_gpus.RESOURCES).

    python3 docs/results/perfmodel/cpp_matches.py build/emu/grader/gpulab-perfmodel-predict
"""
import itertools
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402
import other_gpus  # noqa: E402

RESULTS = os.path.join(model.ROOT, "docs", "results")


def main():
    exe = sys.argv[1]
    bad = 0
    checked = 0
    for gpu, counts_name in itertools.product(model.GPUS, ("perfmodel-ladder-counts-256.tsv",
                                                          "perfmodel-ladder-counts-512.tsv")):
        counts_path = os.path.join(RESULTS, counts_name)
        # Each GPU with its own compiler's registers and shared memory (other_gpus.RESOURCES).
        resources_path = os.path.join(RESULTS, other_gpus.RESOURCES[gpu])
        resources = {r["step"]: r for r in model.read_tsv(resources_path)}
        out = subprocess.run([exe, counts_path, resources_path, "4096", gpu], capture_output=True, text=True,
                             check=True).stdout
        cpp = {f[0]: (float(f[1]), f[2]) for f in (line.split("\t") for line in out.splitlines())}
        for row in model.read_tsv(counts_path):
            t, bound, _ = model.predict_v1(row, resources[row["step"]], model.GPUS[gpu], 4096)
            got_t, got_bound = cpp[row["step"]]
            ok = abs(got_t / t - 1) < 1e-9 and got_bound == bound
            checked += 1
            if not ok:
                bad += 1
            print("%s %s step %-3s python %.6e s (%s)  c++ %.6e s (%s)  %s" % (
                gpu, counts_name, row["step"], t, bound, got_t, got_bound, "same" if ok else "DIFFERENT"))
    print("%d of %d predictions the same" % (checked - bad, checked))
    sys.exit(1 if bad or not checked else 0)


if __name__ == "__main__":
    main()
