#!/usr/bin/env bash
# The HTML report of a grade (--html; ./gpulab grade writes one every time): for a failing and a
# passing hand-in of two labs (the stubs as shipped and the references of labs 01 and 03), the
# page is one file that needs nothing else (no script, no external link), and the lines it
# annotates are exactly the lines of the JSON report's metrics. Where Chromium is installed the
# page is also rendered headless and the annotated lines read back from its DOM; with
# SCREENSHOTS=DIR set, a screenshot of each is kept there. A GPU's JSON report made into a page
# shows each measured ratio against its threshold.
# Usage: grader/tests/cli/html_report_test.sh REPO_ROOT BUILD_DIR
# shellcheck source=grader/tests/cli/test_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_env.sh"
grader="$build/grader/gpulab-grade"
chromium="$(command -v chromium || command -v chromium-browser || true)"

# The set of "file:line" the JSON's metrics name, and the set the page annotates ("file:line"
# from its rows' ids), read from a file (HTML as written) or from Chromium's DOM.
json_lines() { python3 -c '
import json, os, sys
r = json.load(open(sys.argv[1]))
print("\n".join(sorted({os.path.basename(m["line"].rsplit(":", 1)[0]) + ":" + m["line"].rsplit(":", 1)[1]
                        for l in r["labs"] for m in l["metrics"]})))' "$1"; }
html_lines() { grep -oE 'id="[^"]+-L[0-9]+" class="annotated"' "$1" | sed -E 's/id="(.+)-L([0-9]+)".*/\1:\2/' | sort -u; }

for lab in 01 03; do
  for impl in stub solution; do
    name="lab$lab-$impl"
    if [[ $impl == stub ]]; then
      src="$(ls "$root/grader/tests/submissions/"$lab-*/stub/*.cu | head -1)"
      args=(--submission "$src")
    else
      args=(--impl solution)
    fi
    "$grader" grade "$lab" "${args[@]}" --warp-size 32 --seed 1 --json "$tmp/$name.json" --html "$tmp/$name.html" \
      > "$tmp/$name.log" 2>&1
    rc=$?
    [[ $impl == solution && $rc -ne 0 ]] && fail "$name: the reference failed (exit $rc): $(tail -5 "$tmp/$name.log")"
    [[ $impl == stub && $rc -ne 1 ]] && fail "$name: the stub did not fail as expected (exit $rc): $(tail -5 "$tmp/$name.log")"
    [[ -s "$tmp/$name.html" ]] || fail "$name: no HTML report"
    grep -qiE '<script|<link|src="http|href="http' "$tmp/$name.html" && fail "$name: the page needs something besides itself"
    json_lines "$tmp/$name.json" > "$tmp/$name.want"
    [[ -s "$tmp/$name.want" ]] || fail "$name: the JSON report has no metrics to compare with"
    html_lines "$tmp/$name.html" > "$tmp/$name.got"
    diff -u "$tmp/$name.want" "$tmp/$name.got" > "$tmp/$name.diff" || fail "$name: annotated lines differ from the JSON's: $(cat "$tmp/$name.diff")"
    if [[ $impl == stub ]]; then
      grep -q 'class="fail">FAIL' "$tmp/$name.html" || fail "$name: no failing check on the page"
    fi
    if [[ -n "$chromium" ]]; then
      timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --dump-dom "file://$tmp/$name.html" > "$tmp/$name.dom" 2>/dev/null \
        || fail "$name: Chromium could not render the page"
      html_lines "$tmp/$name.dom" > "$tmp/$name.rendered"
      diff -u "$tmp/$name.want" "$tmp/$name.rendered" > "$tmp/$name.rdiff" \
        || fail "$name: the rendered page's annotated lines differ from the JSON's: $(cat "$tmp/$name.rdiff")"
      if [[ -n "${SCREENSHOTS:-}" ]]; then
        mkdir -p "$SCREENSHOTS"
        timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1600 \
          --screenshot="$SCREENSHOTS/report-$name.png" "file://$tmp/$name.html" > /dev/null 2>&1 \
          || fail "$name: no screenshot"
      fi
    fi
    echo "$name: $(wc -l < "$tmp/$name.want") annotated lines, as in the JSON${chromium:+ (rendered by Chromium)}"
  done
done
# A GPU's report (lab 02's reference on the H200, docs/screenshots/report-lab02-h200.json) made
# into a page here (`gpulab report`): one bar per performance check with a value and a threshold,
# each with the JSON's value, and the device named.
gpu_json="$root/docs/screenshots/report-lab02-h200.json"
"$grader" report "$gpu_json" --html "$tmp/gpu.html" > "$tmp/gpu.log" 2>&1 || fail "gpulab report: $(cat "$tmp/gpu.log")"
python3 - "$gpu_json" "$tmp/gpu.html" <<'PY' || fail "the GPU report's page does not show its measured ratios"
import json, re, sys
r = json.load(open(sys.argv[1])); page = open(sys.argv[2]).read()
want = [(c["name"].split(".", 1)[1], c["value"]) for l in r["labs"] for c in l["checks"]
        if c["kind"] == "performance" and c["value"] is not None and c["threshold"] is not None]
rows = re.findall(r'<tr><td>([^<]+)</td><td class="bar">.*?</td><td>([0-9.eE+-]+) ', page)
assert [(n, float(v)) for n, v in rows] == [(n, float(v)) for n, v in want], (rows, want)
assert len(want) == 3 and "<th>device</th><td>NVIDIA H200</td>" in page
print("gpu report: %d measured ratios on the page, as in the JSON" % len(want))
PY
echo "html_report: ok"
