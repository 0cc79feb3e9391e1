#!/usr/bin/env bash
# ./gpulab grade-class on a small class of lab 01 hand-ins (a correct one, the stub, one that does
# not compile, one that writes out of bounds, a single-file hand-in, a folder without the lab's
# file): every row of the gradebook must equal grading that hand-in alone with the same seed; a
# second run grades nothing again and keeps the gradebook; a hand-in whose report is missing (a
# killed run) is graded again, and a run stopped by SIGTERM stops its graders and is finished by
# the same command; GitHub Classroom's result of a report has the same points.
# Usage: grader/tests/cli/grade_class_test.sh REPO_ROOT BUILD_DIR
set -euo pipefail
root="$1"
build="$2"
grader="$build/grader/gpulab-grade"
subs="$root/grader/tests/submissions/01-coalescing"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
class="$tmp/class"
mkdir -p "$class/ana" "$class/ben" "$class/cy/labs/01-coalescing" "$class/dee" "$class/notes"
cp "$root/solutions/01-coalescing/row_sum.cu" "$class/ana/"
cp "$subs/stub/row_sum.cu" "$class/ben/"
cp "$subs/does_not_compile.cu" "$class/cy/labs/01-coalescing/row_sum.cu"  # a hand-in's tree: not the working copy
cp "$subs/out_of_bounds_write.cu" "$class/dee/row_sum.cu"
cp "$subs/off_by_one_rows.cu" "$class/eve.cu"
echo "no code here" > "$class/notes/readme.txt"
fail() { echo "FAIL: $*" >&2; exit 1; }

run() { GPULAB_GRADER="$grader" GPULAB_BACKEND=emu python3 "$root/grader/class/grade_class.py" "$@"; }
run "$class" --lab 01 --jobs 2 --seed 4242 --out "$tmp/out" > "$tmp/first.log" 2>&1 || true
cat "$tmp/first.log"
book="$tmp/out/gradebook.csv"
[[ $(tail -n +2 "$book" | wc -l) -eq 6 ]] || fail "gradebook has not 6 rows"

# Every row against grading the hand-in alone, same seed.
while IFS=, read -r student lab score max passed _; do
  entry="$class/$student"; [[ -e "$entry" ]] || entry="$class/$student.cu"
  "$grader" grade 01 --submission "$entry" --seed 4242 --json "$tmp/alone.json" > /dev/null 2>&1 || true
  alone="$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); l=d['labs'][0]; print(l['score'], str(l['passed']).lower())" "$tmp/alone.json")"
  [[ "$alone" == "$score $passed" ]] || fail "$student: class gave '$score $passed', alone '$alone'"
  echo "$student: $score / $max ($passed), the same alone"
done < <(tail -n +2 "$book")
grep -q '^ana,01-coalescing,10.0,10.0,true' "$book" || fail "the reference did not pass"
grep -q '^cy,01-coalescing,0.0,.*does not compile' "$book" || fail "the broken hand-in's row does not say why"
grep -q '^notes,01-coalescing,0.0,.*has no row_sum.cu' "$book" || fail "the empty hand-in's row does not say why"

# Resumable: nothing is graded again, the gradebook is the same.
cp "$book" "$tmp/book1.csv"
run "$class" --lab 01 --jobs 2 --seed 4242 --out "$tmp/out" > "$tmp/second.log" 2>&1 || true
grep -q "6 of 6 already graded" "$tmp/second.log" || fail "the second run graded again: $(cat "$tmp/second.log")"
cmp -s "$book" "$tmp/book1.csv" || fail "the second run changed the gradebook"
# A missing report (a run killed before it finished that hand-in) is graded again, alone.
rm "$tmp/out/students/ben/01-coalescing.json"
run "$class" --lab 01 --jobs 2 --seed 4242 --out "$tmp/out" > "$tmp/third.log" 2>&1 || true
grep -q "5 of 6 already graded" "$tmp/third.log" || fail "the missing report was not re-graded: $(cat "$tmp/third.log")"
cmp -s "$book" "$tmp/book1.csv" || fail "re-grading ben with the same seed changed the gradebook"

# Stopped in the middle (SIGTERM, as a scheduler's time limit does): its graders stop with it,
# and the same command finishes the gradebook, identical to an uninterrupted run's.
GPULAB_GRADER="$grader" GPULAB_BACKEND=emu python3 "$root/grader/class/grade_class.py" "$class" --lab 01 --jobs 2 \
  --seed 4242 --out "$tmp/killed" > "$tmp/killed.log" 2>&1 &
pid=$!
sleep 4
kill -TERM "$pid"
wait "$pid" || true
sleep 1
if pgrep -f -- "--json $tmp/killed/" > /dev/null; then fail "graders still run after the class run was stopped"; fi
grep -q "stopped by signal 15" "$tmp/killed.log" || fail "the stop is not reported: $(cat "$tmp/killed.log")"
run "$class" --lab 01 --jobs 2 --seed 4242 --out "$tmp/killed" > "$tmp/resumed.log" 2>&1 || true
cut -d, -f1-9 "$tmp/killed/gradebook.csv" > "$tmp/k.csv"; cut -d, -f1-9 "$tmp/book1.csv" > "$tmp/b.csv"
cmp -s "$tmp/k.csv" "$tmp/b.csv" || fail "the resumed gradebook differs: $(diff "$tmp/k.csv" "$tmp/b.csv")"

# GitHub Classroom's view of a report (grader/class/classroom_result.py): the points of every check, so
# the sum is the score and max_score the report's maximum.
for who in ana ben cy; do
  python3 "$root/grader/class/classroom_result.py" "$tmp/out/students/$who/01-coalescing.json" | base64 -d > "$tmp/classroom.json"
  got="$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(round(sum(t['score'] for t in d['tests']), 4), d['max_score'], d['status'])" "$tmp/classroom.json")"
  want="$(grep "^$who," "$book" | python3 -c "import csv,sys; r=next(csv.reader(sys.stdin)); print(float(r[2]), float(r[3]), 'pass' if r[4] == 'true' else 'fail')")"
  [[ "$got" == "$want" ]] || fail "$who: Classroom result '$got', gradebook '$want'"
done
python3 "$root/grader/class/classroom_result.py" "$tmp/missing.json" | base64 -d | grep -q '"status":"error"' || fail "a missing report is not an error"
echo "grade-class: verdicts equal to grading alone; resumable; Classroom points equal the scores"
