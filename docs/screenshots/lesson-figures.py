#!/usr/bin/env python3
"""Screenshots of every figure as a reader meets it: the section of the lesson or deeper page that
shows it, rendered to HTML and opened in headless Chromium.

    python3 docs/screenshots/lesson-figures.py      (needs python3-markdown and chromium)

Writes docs/screenshots/figure-<figure>.png, one per figure a page shows, and prints each page,
section and figure it rendered. A figure no page shows is listed as such (exit status 1): every
SVG under docs/figures must be read somewhere.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "docs", "screenshots")
STYLE = ("body{font-family:sans-serif;max-width:860px;margin:16px auto;font-size:14px;line-height:1.4}"
         "img{max-width:100%}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
         "code{background:#f3f3f3}")


def sections(text):
    """(heading, body) of each '## ' section (the part before the first heading too)."""
    parts = re.split(r"(?m)^(?=## )", text)
    return [(p.splitlines()[0] if p.startswith("## ") else "(top)", p) for p in parts]


def main():
    try:
        import markdown
    except ImportError:
        sys.exit("lesson-figures: python3-markdown is missing (Debian/Ubuntu: apt-get install python3-markdown)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not chromium:
        sys.exit("lesson-figures: no chromium (Debian/Ubuntu: apt-get install chromium)")
    pages = sorted(glob.glob(os.path.join(ROOT, "labs", "*", "README.md")) +
                   glob.glob(os.path.join(ROOT, "docs", "deeper", "*.md")))
    shown = set()
    with tempfile.TemporaryDirectory() as tmp:
        for page in pages:
            with open(page) as f:
                text = f.read()
            for heading, body in sections(text):
                for m in re.finditer(r"!\[[^\]]*\]\(([^)]+\.svg)\)", body):
                    svg = os.path.normpath(os.path.join(os.path.dirname(page), m.group(1)))
                    name = os.path.splitext(os.path.basename(svg))[0]
                    if name in shown:
                        continue
                    shown.add(name)
                    # The section, with the figure's link made absolute (the HTML lives elsewhere).
                    html = markdown.markdown(body.replace(m.group(1), "file://" + svg), extensions=["tables", "fenced_code"])
                    src = os.path.join(tmp, name + ".html")
                    with open(src, "w") as f:
                        f.write("<!doctype html><meta charset=utf-8><style>%s</style>%s" % (STYLE, html))
                    png = os.path.join(OUT, "figure-%s.png" % name)
                    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                    "--window-size=900,1100", "--screenshot=" + png, "file://" + src],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=True)
                    print("%s, %s: %s -> %s" % (os.path.relpath(page, ROOT), heading, os.path.basename(svg),
                                                 os.path.relpath(png, ROOT)))
    unshown = sorted(set(os.path.splitext(os.path.basename(p))[0]
                         for p in glob.glob(os.path.join(ROOT, "docs", "figures", "*.svg"))) - shown)
    for name in unshown:
        print("lesson-figures: docs/figures/%s.svg is shown by no lesson or deeper page" % name)
    return 1 if unshown else 0


if __name__ == "__main__":
    sys.exit(main())
