#!/usr/bin/env bash
# An emulator grade is deterministic: for every lab, the reference graded with the same seed on 1
# worker thread, on 8, and on 8 again gives the same checks (every verdict, value and message),
# whatever the blocks' interleaving across threads. Left out of the comparison: the phase times
# ("seconds") and info.driver (which names the worker count). The per-line metrics rows are
# compared too but only reported: where a store's address comes from an atomic's result (lab 05's
# counting sort places each index at an atomicAdd's slot) the order of blocks across threads
# moves those stores, as it does on a GPU, and the row's sectors per request with it. The
# performance model's roofline of each measured call (info "roofline CALL", kit.cpp) is computed
# from those same per-request counts, so it is set aside with the metrics rows: compared, and only
# reported (lab 05's linear-order sort: 0.8231 on 1 worker, 0.8233-0.8240 on 8).
# Usage: grade_workers_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src="$1"; build="$2"
grader="$build/grader/gpulab-grade"
[[ -x "$grader" ]] || { echo "no grader at $grader"; exit 1; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail=0
labs=$(cd "$src/labs" && ls -d [0-9][0-9]-* | cut -c1-2)
for lab in $labs; do
  for run in w1 w8 w8-again; do
    workers=${run#w}; workers=${workers%-again}
    GPULAB_EMU_WORKERS=$workers "$grader" grade "$lab" --impl solution --seed 20261130 --json "$tmp/$lab-$run.json" \
      > "$tmp/$lab-$run.log" 2>&1
    # The report without its timings (and without the seed's echo in info, which is the same anyway).
    python3 - "$tmp/$lab-$run.json" "$tmp/$lab-$run.txt" "$tmp/$lab-$run.metrics" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
metrics = []
for lab in j["labs"]:
    lab.pop("seconds", None)
    lab.get("info", {}).pop("driver", None)
    lab.get("info", {}).pop("metrics", None)
    info = lab.get("info", {})
    rooflines = {k: info.pop(k) for k in [k for k in info if k.startswith("roofline ")]}
    metrics.append({"rows": lab.pop("metrics", []), "rooflines": rooflines})
open(sys.argv[2], "w").write(json.dumps(j, indent=1, sort_keys=True))
open(sys.argv[3], "w").write(json.dumps(metrics, indent=1, sort_keys=True))
EOF
  done
  same=1
  for run in w8 w8-again; do
    if ! cmp -s "$tmp/$lab-w1.txt" "$tmp/$lab-$run.txt"; then
      echo "FAIL lab $lab: the report on 1 worker differs from the one on ${run}:"
      diff "$tmp/$lab-w1.txt" "$tmp/$lab-$run.txt" | head -20
      fail=1; same=0
    fi
    cmp -s "$tmp/$lab-w1.metrics" "$tmp/$lab-$run.metrics" ||
      echo "note: lab $lab: metrics rows on 1 worker and on $run differ in $(diff "$tmp/$lab-w1.metrics" "$tmp/$lab-$run.metrics" | grep -c '^<') line(s) (see the header)"
  done
  checks=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['labs'][0]['checks']))" "$tmp/$lab-w1.json" 2>/dev/null || echo 0)
  [[ "$checks" -gt 0 ]] || { echo "FAIL lab $lab: no checks in the report ($(tail -3 "$tmp/$lab-w1.log"))"; fail=1; continue; }
  [[ $same == 1 ]] && echo "ok: lab $lab: $checks checks, the same on 1, 8 and 8 workers again"
done
exit $fail
