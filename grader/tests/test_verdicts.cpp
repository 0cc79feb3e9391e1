// Every submission under submissions/<lab>/ is graded by the real grader, and must get the
// verdict its `// expect:` lines state:
//   // expect: correctness fail "substring of a failing check's message"
//   // expect: performance pass
//   // expect[emu]: sanitizer fail "race"        (only on that back-end)
//   // expect: lab pass
//   // expect: correctness.tile_multiples pass    (one check, at every warp size)
//   // options: --timeout 10                      (extra grader options for this file)
// `fail` means at least one check of that kind failed (and, with a substring, that one failing
// check of that kind says it); `pass` means every check of that kind passed. A kind followed by
// `.name` is that one check (named like the report's rows, without the " [warp N]" suffix).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "verdict_util.hpp"
#include "xml_check.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Expectation {
  std::string kind;  // correctness | performance | sanitizer | lab, or kind.check_name
  bool pass = false;
  std::string substring;
};

struct Case {
  std::string lab;
  fs::path file;  // a submission, or "solution" / "student" for the repository's own
  std::vector<Expectation> expect;
  std::string options;
  std::vector<std::string> needs;  ///< `// needs: nvcc`: tools the stated verdict depends on
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.file.filename().string(); }

std::string parse_options(std::istream& in, std::vector<std::string>& needs) {
  static const std::regex re(R"re(//\s*options:\s*(.*))re"), needs_re(R"re(//\s*needs:\s*(\w+))re");
  std::string line, out;
  std::smatch m;
  while (std::getline(in, line)) {
    // Only comment lines naming a directive reach the regular expressions (each test process
    // parses every submission).
    if (line.find("//") == std::string::npos ||
        (line.find("options:") == std::string::npos && line.find("needs:") == std::string::npos))
      continue;
    if (std::regex_search(line, m, re)) out += " " + m[1].str();
    else if (std::regex_search(line, m, needs_re)) needs.push_back(m[1].str());
  }
  return out;
}

std::vector<Expectation> parse_expectations(std::istream& in) {
  std::vector<Expectation> out;
  static const std::regex line_re(R"re(//\s*expect(\[(\w+)\])?:\s*(\w+(?:\.\w+)?)\s+(pass|fail)(\s+"([^"]*)")?)re");
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.find("//") == std::string::npos || line.find("expect") == std::string::npos) continue;
    if (!std::regex_search(line, m, line_re)) continue;
    if (m[2].matched && m[2].str() != GPULAB_BACKEND_NAME) continue;
    out.push_back({m[3].str(), m[4].str() == "pass", m[6].matched ? m[6].str() : ""});
  }
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& lab : fs::directory_iterator(GPULAB_SUBMISSIONS_DIR)) {
    if (!lab.is_directory()) continue;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(lab.path()))
      if (f.path().extension() == ".cu" || f.path().extension() == ".expect") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    // The steps of a lab's ladder (solutions/<lab>/steps/) that state their verdicts, graded in place.
    const fs::path steps = fs::path(GPULAB_SOURCE_DIR) / "solutions" / lab.path().filename() / "steps";
    if (fs::is_directory(steps))
      for (const auto& f : fs::directory_iterator(steps))
        if (f.path().extension() == ".cu") files.push_back(f.path());
    for (const auto& f : files) {
      std::ifstream in(f), again(f);
      std::vector<Expectation> expect = parse_expectations(in);
      if (expect.empty() && f.parent_path() == steps) continue;
      std::vector<std::string> needs;
      std::string options = parse_options(again, needs);
      cases.push_back({lab.path().filename().string(), f, std::move(expect), options, needs});
    }
  }
  return cases;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// The JSON report, parsed; a report that does not parse (or is missing) fails the test there.
json parse_report(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    ADD_FAILURE() << "the JSON report does not parse: " << e.what() << "\n" << text;
    return json::object();
  }
}

/// Runs gpulab-grade; GitHub's step summary is left alone (these runs are not CI's grading).
int run_grader(const std::string& args) {
  return std::system(("env -u GITHUB_STEP_SUMMARY " + std::string(GPULAB_GRADER) + " " + args).c_str());
}

class Verdict : public ::testing::TestWithParam<Case> {};

TEST_P(Verdict, GraderGivesTheExpectedVerdict) {
  const Case& c = GetParam();
  if (c.expect.empty()) GTEST_SKIP() << c.file << " states no verdict for the " << GPULAB_BACKEND_NAME << " back-end";
  if (std::string(GPULAB_BACKEND_NAME) == "emu")
    for (const std::string& tool : c.needs)
      if (!verdict::has_tool(tool))
        GTEST_SKIP() << c.file << " states the verdict the emulator gives with " << tool << ", which this machine lacks";
  // A `.expect` file grades the repository's own implementation named by its stem: the reference
  // (solutions/), or the stub as shipped (student.expect grades the copy in <lab>/stub/, never
  // labs/<lab>/, which the student edits: the suite must not depend on the student's progress).
  const std::string stem = c.file.stem().string();
  std::string what = "--submission '" + c.file.string() + "'";
  if (c.file.extension() == ".expect" && stem == "student") {
    const fs::path stub = c.file.parent_path() / "stub";
    ASSERT_TRUE(fs::is_directory(stub)) << stub << " is missing: it holds a copy of the lab's stub as shipped";
    what = "--submission '" + stub.string() + "'";
  } else if (c.file.extension() == ".expect") {
    what = "--impl " + stem;
  }
  const std::string out =
      (fs::temp_directory_path() / ("gpulab-verdict-" + std::to_string(::getpid()) + ".json")).string();
  std::remove(out.c_str());
  const int rc = run_grader("grade " + c.lab + " " + what + " --timeout 60" + c.options + " --json " + out +
                            " --junit " + out + ".xml > " + out + ".log 2>&1");
  const std::string report = read(out);
  if (const char* keep = std::getenv("GPULAB_VERDICT_REPORTS"); keep && *keep) {
    // Where the reports of a suite run are kept (e.g. the GPU machine's runs, whose ratios and
    // phase times the results pages quote): <lab>_<file stem>.json and .txt.
    const std::string base = std::string(keep) + "/" + c.lab + "_" + c.file.stem().string();
    fs::create_directories(keep);
    std::ofstream(base + ".json") << report;
    std::ofstream(base + ".txt") << read(out + ".log");
  }
  ASSERT_FALSE(report.empty()) << "no JSON report was written (exit " << rc << "):\n" << read(out + ".log");
  json j = parse_report(report);
  ASSERT_TRUE(j.contains("labs") && j["labs"].size() == 1) << report;
  json& lab = j["labs"][0];
  EXPECT_EQ(j["complete"], true) << report;
  EXPECT_EQ(lab["status"], "graded") << report;
  EXPECT_TRUE(lab.contains("isolation") && lab["isolation"].is_string()) << report;
  const bool lab_passed = lab.value("passed", false);
  json& checks = lab["checks"];
  ASSERT_FALSE(checks.empty()) << report;
  for (const auto& e : c.expect) {
    if (e.kind == "lab") {
      EXPECT_EQ(lab_passed, e.pass) << "lab verdict\n" << report;
      continue;
    }
    bool any = false, all_pass = true, said = e.substring.empty();
    for (auto& ch : checks) {
      if (!verdict::is_of(ch, e.kind)) continue;
      any = true;
      const bool passed = ch.value("passed", false);
      all_pass = all_pass && passed;
      const std::string text = ch.value("name", "") + " " + ch.value("message", "");
      if (!passed && text.find(e.substring) != std::string::npos) said = true;
    }
    EXPECT_TRUE(any) << "no " << e.kind << " check in the report\n" << report;
    if (e.pass) {
      EXPECT_TRUE(all_pass) << e.kind << " should pass\n" << report;
    } else {
      EXPECT_FALSE(all_pass) << e.kind << " should fail\n" << report;
      EXPECT_TRUE(said) << "no failing " << e.kind << " check says \"" << e.substring << "\"\n" << report;
    }
  }
  EXPECT_EQ(rc == 0, lab_passed) << "the exit status must be 0 exactly when everything passed";
  // The JUnit file of the same run is well formed, whatever the messages held.
  const std::string junit = read(out + ".xml");
  std::string why;
  EXPECT_TRUE(well_formed_xml(junit, why)) << why << "\n" << junit;
  EXPECT_NE(junit.find("<testcase"), std::string::npos);
  EXPECT_EQ(junit.find("grading incomplete"), std::string::npos) << junit;
  std::remove((out + ".xml").c_str());
  std::remove(out.c_str());
  std::remove((out + ".log").c_str());
}

INSTANTIATE_TEST_SUITE_P(Submissions, Verdict, ::testing::ValuesIn(all_cases()), [](const auto& info) {
  std::string name = info.param.lab + "_" + info.param.file.stem().string();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

}  // namespace

namespace {

json grade_to_json(const std::string& args, int* rc = nullptr) {
  const std::string out = (fs::temp_directory_path() / ("gpulab-e2e-" + std::to_string(::getpid()) + ".json")).string();
  std::remove(out.c_str());
  const int status = run_grader("grade " + args + " --json " + out + " > " + out + ".log 2>&1");
  if (rc) *rc = status;
  const std::string report = read(out);
  std::remove(out.c_str());
  std::remove((out + ".log").c_str());
  return report.empty() ? json::object() : parse_report(report);
}

/// The checks of a JSON report's first lab (name, verdict, value, message: all that the seed fixes).
json checks_of(json report) {
  return report.contains("labs") && !report["labs"].empty() ? report["labs"][0]["checks"] : json::array();
}

}  // namespace

// The copies of the stubs that student.expect grades are the stubs of labs/ as shipped. Once a
// student works on a lab its file differs, and that is not the grader's fault: the comparison is
// then skipped (a course maintainer who changes a stub copies it to submissions/<lab>/stub/).
TEST(Stubs, TheGradedCopiesAreTheLabsStubs) {
  std::vector<std::string> edited;
  int copies = 0;
  for (const auto& lab : fs::directory_iterator(GPULAB_SUBMISSIONS_DIR)) {
    if (!fs::is_directory(lab.path() / "stub")) {
      if (fs::exists(lab.path() / "student.expect")) ADD_FAILURE() << lab.path() / "stub" << " is missing";
      continue;
    }
    for (const auto& f : fs::directory_iterator(lab.path() / "stub")) {
      const fs::path shipped = fs::path(GPULAB_SOURCE_DIR) / "labs" / lab.path().filename() / f.path().filename();
      ++copies;
      if (!fs::is_regular_file(shipped)) ADD_FAILURE() << f.path() << " is not a file of " << shipped.parent_path();
      else if (read(f.path().string()) != read(shipped.string())) edited.push_back(shipped.string());
    }
  }
  EXPECT_GE(copies, 2);
  if (!edited.empty()) {
    std::string list;
    for (const auto& e : edited) list += "\n  " + e;
    GTEST_SKIP() << "these files differ from the stubs the verdict suite grades (grader/tests/submissions/<lab>/stub/),"
                    " as they do once you work on a lab:" << list;
  }
}

TEST(Grader, GradesADirectoryLaidOutLikeTheRepository) {
  const fs::path dir = fs::temp_directory_path() / ("gpulab-handin-" + std::to_string(::getpid()));
  fs::create_directories(dir / "labs" / "01-coalescing");
  fs::copy_file(fs::path(GPULAB_SUBMISSIONS_DIR) / "01-coalescing" / "good_warp_shuffle.cu",
                dir / "labs" / "01-coalescing" / "row_sum.cu", fs::copy_options::overwrite_existing);
  int rc = -1;
  json report = grade_to_json("01 --submission " + dir.string() + " --warp-size 32", &rc);
  EXPECT_EQ(rc, 0) << report.dump(2);
  EXPECT_EQ(report.value("passed", false), true) << report.dump(2);
  ASSERT_FALSE(report.value("labs", json::array()).empty()) << report.dump(2);
  EXPECT_NE(
      report["labs"][0]["source"].get<std::string>().find((dir / "labs" / "01-coalescing" / "row_sum.cu").string()),
      std::string::npos)
      << report.dump(2);

  fs::remove(dir / "labs" / "01-coalescing" / "row_sum.cu");
  const json missing = grade_to_json("01 --submission " + dir.string(), &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(missing.dump().find("has no row_sum.cu for lab 01-coalescing"), std::string::npos) << missing.dump(2);
  fs::remove_all(dir);
}

TEST(Grader, ReportsEveryMetricRowOfTheMeasuredRun) {
  // Regression: the report kept only the first metric row of a grade. Lab 03's reference has a
  // global load, a global store, a shared load and a shared store in each of its measured calls.
  if (std::string(GPULAB_BACKEND_NAME) != "emu") GTEST_SKIP() << "metrics come from the emulator";
  const json report = grade_to_json("03 --impl solution --warp-size 32");
  ASSERT_TRUE(report.contains("labs") && !report["labs"].empty()) << report.dump(2);
  const json& metrics = report["labs"][0]["metrics"];
  int shared = 0, global = 0;
  for (const json& m : metrics) (m.value("space", "") == "shared" ? shared : global)++;
  EXPECT_GE(shared, 2) << metrics.dump(2);
  EXPECT_GE(global, 2) << metrics.dump(2);
}

TEST(Grader, TheSameSeedGivesTheSameReport) {
  if (std::string(GPULAB_BACKEND_NAME) != "emu") GTEST_SKIP() << "GPU timings vary from run to run";
  const std::string stub =
      (fs::path(GPULAB_SUBMISSIONS_DIR) / "01-coalescing" / "race_missing_syncthreads.cu").string();
  const json first = checks_of(grade_to_json("01 --seed 4242 --submission " + stub));
  const json second = checks_of(grade_to_json("01 --seed 4242 --submission " + stub));
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, second);
}
