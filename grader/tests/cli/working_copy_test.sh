#!/usr/bin/env bash
# The test suite must pass whatever a student did in labs/: no test, tool or build file reads a
# file the student edits (labs/<lab>/*.cu) by name. The grader's own student target (cmake/
# GpulabLab.cmake, through the lab's folder) and the lessons that point the student to it are the
# only users; the suite grades the stub as shipped from grader/tests/submissions/<lab>/stub/.
# Usage: grader/tests/cli/working_copy_test.sh REPO_ROOT
set -uo pipefail
root="$1"
cd "$root" || exit 1
bad=0
for f in labs/*/*.cu; do
  # Where the path is named: code and build files (not the lessons or the docs, which tell the
  # student which file to edit, and not the verdict suite's notes).
  hits="$(grep -rIln --include='*.cpp' --include='*.cu' --include='*.hpp' --include='*.h' --include='*.py' \
          --include='*.sh' --include='CMakeLists.txt' --include='*.cmake' -F "$f" \
          common grader tools tests cmake CMakeLists.txt .ci 2>/dev/null |
          grep -v "^grader/tests/cli/working_copy_test.sh$")"
  # Relative includes of the working copy ("../../labs/<lab>/<file>.cu") are the same thing.
  rel="$(grep -rIln --include='*.cpp' --include='*.cu' -E "#include \"(\.\./)+$f\"" common grader tools tests 2>/dev/null)"
  for h in $(printf "%s\n" $hits $rel | sort -u); do
    # A comment that names the file is no read of it, nor a line marked "not the working copy"
    # (a hand-in laid out like the repository in a folder of its own).
    if grep -n -F "$f" "$h" | grep -v "not the working copy" | grep -qvE '^[0-9]+:\s*(//|# |#$)'; then
      echo "FAIL: $h reads $f, the student's working copy (use grader/tests/submissions/<lab>/stub/ or solutions/)"
      bad=1
    fi
  done
done
[[ $bad -eq 0 ]] && echo "working_copy: ok"
exit $bad
