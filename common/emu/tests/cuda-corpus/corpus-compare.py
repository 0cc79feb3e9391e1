#!/usr/bin/env python3
"""Compares the verdicts of two runs of the CUDA corpus (common/emu/tests/cuda-corpus/corpus-run.sh), e.g. the emulator
against the H200: every (program, version) must be present in both runs with the same verdict.
The error values are shown side by side but not compared (they may differ within tolerance).

Usage: common/emu/tests/cuda-corpus/corpus-compare.py RUN_A RUN_B [--names A B]
  RUN_*: a versions.txt, or the directory corpus-run.sh wrote (holding versions.txt).
Exit status: 0 when every verdict agrees, 1 otherwise, 2 on a bad input.
"""
import argparse
import os
import sys


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "versions.txt")
    runs = {}
    order = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 4 or fields[1] != "VERSION" or fields[3] not in ("PASS", "FAIL"):
                sys.exit(f"{path}:{number}: not '<program> VERSION <name> PASS|FAIL [error]': {line.rstrip()}")
            key = (fields[0], fields[2])
            if key in runs:
                sys.exit(f"{path}:{number}: {key[0]} {key[1]} appears twice")
            runs[key] = (fields[3], " ".join(fields[4:]))
            order.append(key)
    return runs, order


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_a")
    parser.add_argument("run_b")
    parser.add_argument("--names", nargs=2, default=["A", "B"], metavar=("A", "B"))
    args = parser.parse_args()
    a, order_a = load(args.run_a)
    b, order_b = load(args.run_b)
    keys = order_a + [k for k in order_b if k not in a]
    name_a, name_b = args.names
    print(f"| program | version | {name_a} | {name_b} | agree |")
    print("|---|---|---|---|---|")
    disagreements = 0
    for key in keys:
        va, vb = a.get(key), b.get(key)
        agree = va is not None and vb is not None and va[0] == vb[0]
        disagreements += not agree
        cell_a = f"{va[0]} {va[1]}".strip() if va else "missing"
        cell_b = f"{vb[0]} {vb[1]}".strip() if vb else "missing"
        print(f"| {key[0]} | {key[1]} | {cell_a} | {cell_b} | {'yes' if agree else 'NO'} |")
    print(f"\n{len(keys) - disagreements} of {len(keys)} verdicts agree")
    return 0 if disagreements == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
