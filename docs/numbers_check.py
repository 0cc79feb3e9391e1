#!/usr/bin/env python3
"""One source for every number: checks the numbers the lessons and their deeper pages quote
against the results tables they come from.

    python3 docs/numbers_check.py                 every lesson (labs/*/README.md) and deeper page
    python3 docs/numbers_check.py PAGE...         those pages only
    python3 docs/numbers_check.py --root DIR ...  tables named relative to DIR (a test's tree)

A measured number carries its source as an HTML comment right after it (invisible on the page):

    reaches 0.936<!-- from: docs/results/lab02-h200.tsv row=solution col=positions_only --> of a copy
    at most 4.8 TB/s<!-- from: docs/results/facts.tsv row=h200_dram_bandwidth col=value --> (a unit may come between)

- The table is a TSV under docs/results (lines starting with '#' are comments; the first other line
  is the header) or a markdown pipe table of a page (`table=N`, 1-based, picks one of several).
- `row=` matches the first cell of a row, `col=` a header cell (markup and backticks ignored, case
  ignored; quote values with spaces: row="step 3"). `row=` may also be `NAME=VALUE` pairs joined
  by `&` for tables whose rows need two columns to tell apart (row="warp_size=64&n=100").
- The quoted number must equal the table's value rounded to the digits quoted (`scale=100` when a
  fraction is quoted as a percentage; `part=N` takes the Nth number of a cell such as "253 us, 0.991").
- Dimensions (8 x 8, 4096 × 4096) are no ratios and need no source.

Which numbers need a source (outside code): every number with two or more decimals, every ratio
(a number followed by x or ×) and every number with a unit of bandwidth, size or rate (GB/s,
TB/s, MiB, GiB, MB, KiB, TFLOP/s, GFLOP/s). Facts that are no measurement of this project (a
datasheet's bandwidth) come from docs/results/facts.tsv, which names each one's source.

Exit status 0 when every annotation matches its table and every such number has one; 1 otherwise,
with file:line, the number, what the table says and a hint.
"""
import csv
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ANNOTATION = re.compile(r"<!--\s*from:\s*(?P<spec>.*?)\s*-->")
UNIT = r"(?:GB/s|TB/s|MiB|GiB|MB|KiB|TFLOP/s|GFLOP/s)"
NUMBER_BEFORE = re.compile(r"(?P<num>[-+]?\d[\d,]*(?:\.\d+)?)\s?(?:%|x|×|" + UNIT + r")?\s*(?:\*\*)?\s*$")
NEEDS_SOURCE = re.compile(
    r"(?<![\w.\-/^])(?P<num>\d[\d,]*\.\d{2,}(?![\d.]*\.\d)|\d[\d,]*(?:\.\d+)?(?=\s?(?:x|×)(?!\w|\s?\d)|\s?" + UNIT + r"(?![\w])))")


def norm(text):
    return re.sub(r"[`*_]", "", text).strip().lower()


def parse_spec(spec):
    """`PATH key=value key="two words"` -> (PATH, {key: value})."""
    path, _, rest = spec.partition(" ")
    fields = dict((m.group(1), m.group(2) if m.group(2) is not None else m.group(3))
                  for m in re.finditer(r'(\w+)=(?:"([^"]*)"|(\S+))', rest))
    return path, fields


def tsv_table(path):
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip() and not line.startswith("#")]
    rows = list(csv.reader(lines, delimiter="\t"))
    return rows[0], rows[1:]


def markdown_tables(path):
    tables, current = [], None
    with open(path) as f:
        for line in f:
            if line.lstrip().startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if current is None:
                    current = [cells]
                elif not all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                    current.append(cells)
            elif current is not None:
                tables.append(current)
                current = None
    if current is not None:
        tables.append(current)
    return [(t[0], t[1:]) for t in tables]


def lookup(path, fields):
    """The cell a spec names, or raises ValueError saying why not."""
    full = os.path.join(ROOT, path)
    if not os.path.isfile(full):
        raise ValueError("no such table: " + path)
    if path.endswith(".md"):
        tables = markdown_tables(full)
        n = int(fields.get("table", "1"))
        if not 1 <= n <= len(tables):
            raise ValueError("%s has %d table(s), not a table %d" % (path, len(tables), n))
        header, rows = tables[n - 1]
    else:
        header, rows = tsv_table(full)
    names = [norm(h) for h in header]
    col = norm(fields.get("col", ""))
    if col not in names:
        raise ValueError("no column %r in %s (columns: %s)" % (fields.get("col"), path, ", ".join(header)))
    want = fields.get("row", "")
    if "=" in want:
        pairs = [p.split("=", 1) for p in want.split("&")]
        for name, _ in pairs:
            if norm(name) not in names:
                raise ValueError("no column %r in %s" % (name, path))
        match = [r for r in rows if all(len(r) > names.index(norm(k)) and norm(r[names.index(norm(k))]) == norm(v)
                                        for k, v in pairs)]
    else:
        match = [r for r in rows if r and norm(r[0]) == norm(want)]
    if len(match) != 1:
        raise ValueError("%d rows of %s match row=%r" % (len(match), path, want))
    row = match[0]
    i = names.index(col)
    if i >= len(row):
        raise ValueError("row %r of %s has no column %r" % (want, path, fields.get("col")))
    return row[i]


def to_float(text, part=1):
    """The `part`-th number of a cell (a cell may hold "253 us, 0.991")."""
    found = re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?", text.replace("−", "-"))
    if len(found) < part:
        raise ValueError("the table's cell %r holds no number %d" % (text, part))
    return float(found[part - 1].replace(",", ""))


def matches(quoted, value):
    """Whether `quoted` (as written) is `value` rounded to the digits it shows."""
    q = float(quoted.replace(",", ""))
    decimals = len(quoted.split(".")[1]) if "." in quoted else 0
    return abs(value - q) <= 0.5 * 10 ** -decimals + 1e-12 * max(1.0, abs(value))


def prose_lines(text):
    """(line number, line) outside fenced code, with inline code blanked."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield n, re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


def check_page(page):
    problems = []
    rel = os.path.relpath(page, ROOT)
    with open(page) as f:
        text = f.read()
    for n, line in prose_lines(text):
        sourced = set()
        for m in ANNOTATION.finditer(line):
            before = NUMBER_BEFORE.search(line[:m.start()])
            if not before:
                problems.append("%s:%d: a source comment follows no number\n  hint: put it right after the number"
                                " it sources (`0.936<!-- from: ... -->`)" % (rel, n))
                continue
            sourced.add(before.start("num"))
            path, fields = parse_spec(m.group("spec"))
            try:
                value = to_float(lookup(path, fields), int(fields.get("part", "1"))) * float(fields.get("scale", "1"))
            except ValueError as e:
                problems.append("%s:%d: %s: %s\n  hint: name an existing table, its first-column row and a"
                                " header cell" % (rel, n, before.group("num"), e))
                continue
            if not matches(before.group("num"), value):
                problems.append("%s:%d: the page says %s, %s says %.6g (row=%s col=%s)\n  hint: quote the table's"
                                " value, rounded, or fix the table if the page is right and the table stale"
                                % (rel, n, before.group("num"), path, value, fields.get("row"), fields.get("col")))
        visible = ANNOTATION.sub(lambda m: " " * len(m.group(0)), line)
        visible = re.sub(r"\]\([^)]*\)", lambda m: "]" + " " * (len(m.group(0)) - 1), visible)  # link targets
        for m in NEEDS_SOURCE.finditer(visible):
            if m.start("num") not in sourced:
                problems.append("%s:%d: %s has no source\n  hint: add `<!-- from: docs/results/TABLE row=R col=C -->`"
                                " right after it (docs/numbers_check.py says how), or drop the number" % (rel, n,
                                                                                                      m.group(0)))
    return problems


def default_pages():
    return sorted(glob.glob(os.path.join(ROOT, "labs", "*", "README.md")) +
                  glob.glob(os.path.join(ROOT, "docs", "deeper", "*.md")))


def main(argv):
    global ROOT
    if "--root" in argv:  # tables (and the default pages) under another tree, e.g. a test's
        i = argv.index("--root")
        ROOT = os.path.abspath(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    pages = [os.path.abspath(p) for p in argv] or default_pages()
    problems = [p for page in pages for p in check_page(page)]
    for p in problems:
        print(p)
    print("numbers_check: %d page(s), %d problem(s)" % (len(pages), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
