#!/usr/bin/env python3
"""docs/numbers_check.py on pages written for the test: a quoted number that matches its table
passes; one that does not, one without a source, and a source naming a missing row each fail with
file:line and what the table says."""
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
for f in failures:
    print(f)
sys.exit(1 if failures else 0)
