#!/usr/bin/env python3
"""docs/numbers_check.py on pages written for the test: a quoted number that matches its table
passes; one that does not, one without a source, a source naming a missing row, and a page whose
table changed after it was written each fail with file:line and what the table says."""
import os
import subprocess
import sys
import tempfile

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
check = os.path.join(root, "docs", "numbers_check.py")
src = "docs/results/facts.tsv"


def run(text):
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
        f.write(text)
    try:
        p = subprocess.run([sys.executable, check, f.name], capture_output=True, text=True)
        return p.returncode, p.stdout
    finally:
        os.unlink(f.name)


failures = []
good = ("The H200's L2 holds 60 MiB<!-- from: %s row=h200_l2 col=value -->; its DRAM peaks at\n"
        "4.8 TB/s<!-- from: %s row=h200_dram_bandwidth col=value -->. In code `0.123` needs none.\n" % (src, src))
rc, out = run(good)
if rc != 0:
    failures.append("a page whose numbers match their tables failed:\n" + out)
for text, expect in [
        ("Its DRAM peaks at 4.9 TB/s<!-- from: %s row=h200_dram_bandwidth col=value -->.\n" % src,
         ":1: the page says 4.9, docs/results/facts.tsv says 4.8"),
        ("\nA copy reaches 0.913 of the peak.\n", ":2: 0.913 has no source"),
        ("It is 2.5x<!-- from: %s row=no_such_fact col=value --> faster.\n" % src, "0 rows of docs/results/facts.tsv match"),
]:
    rc, out = run(text)
    if rc != 1 or expect not in out:
        failures.append("expected exit 1 and %r, got exit %d:\n%s" % (expect, rc, out))
# The same page against a table that changed after the page quoted it: the check fails, and says
# what the table says now.
with tempfile.TemporaryDirectory() as tree:
    os.makedirs(os.path.join(tree, "docs", "results"))
    table = os.path.join(tree, "docs", "results", "run.tsv")
    page = os.path.join(tree, "page.md")
    with open(page, "w") as f:
        f.write("The reference reaches 0.96<!-- from: docs/results/run.tsv row=solution col=ratio --> of cuBLAS.\n")
    for value, expect_rc in [("0.963666", 0), ("0.9712", 1)]:
        with open(table, "w") as f:
            f.write("# a results table\nhand_in\tratio\nstub\t0.01\nsolution\t%s\n" % value)
        p = subprocess.run([sys.executable, check, "--root", tree, page], capture_output=True, text=True)
        if p.returncode != expect_rc or (expect_rc and "the page says 0.96, docs/results/run.tsv says 0.9712" not in p.stdout):
            failures.append("table value %s: expected exit %d, got %d:\n%s" % (value, expect_rc, p.returncode, p.stdout))
for f in failures:
    print(f)
sys.exit(1 if failures else 0)
