#!/usr/bin/env python3
"""Turns a gpulab JSON report into what GitHub Classroom's autograding reporter reads, so that the
Classroom dashboard shows each check's points (partial credit), not only pass/fail.

    python3 grader/class/classroom_result.py grade.json            prints the base64 result
    python3 grader/class/classroom_result.py grade.json --json     prints it decoded (to read it)

The reporter (classroom-resources/autograding-grading-reporter) takes, for every runner id named
in its `runners` input, the environment variable <ID>_RESULTS: base64 of a JSON object with
`status` ("pass", "fail" or "error"), `max_score`, and `tests`, each with `name`, `status`,
`score` and `message`; the points it reports are the sum of the tests' scores over the sum of
max_score. Here every check of every graded lab is one test, its score the check's points.
A report that is missing or unreadable (the grader did not finish) is one failing test worth 0.
"""
import base64
import json
import sys


def classroom_result(report_path):
    try:
        with open(report_path) as f:
            report = json.load(f)
        labs = report["labs"]
    except (OSError, ValueError, KeyError) as e:
        return {"version": 1, "status": "error", "max_score": 0,
                "tests": [{"name": "gpulab grade", "status": "error", "score": 0,
                           "message": f"no report from the grader ({report_path}: {e})"}]}
    tests = []
    for lab in labs:
        for c in lab.get("checks", []):
            tests.append({
                "name": f"{lab.get('lab', '')} {c.get('name', '')}",
                "status": "pass" if c.get("passed") else "fail",
                "score": round(float(c.get("points") or 0), 4),
                "max_score": round(float(c.get("max_points") or 0), 4),
                "message": (c.get("message") or "")[:2000],
            })
    max_score = round(sum(float(lab.get("max_score") or 0) for lab in labs), 4)
    return {"version": 1, "status": "pass" if all(t["status"] == "pass" for t in tests) and tests else "fail",
            "max_score": max_score, "tests": tests}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    result = classroom_result(sys.argv[1])
    text = json.dumps(result, separators=(",", ":"))
    if "--json" in sys.argv[2:]:
        print(json.dumps(result, indent=2))
    else:
        print(base64.b64encode(text.encode()).decode())


if __name__ == "__main__":
    main()
