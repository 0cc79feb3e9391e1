// The adversarial suite: submissions written to forge a grade, and faults meant to break the
// grader (grader/tests/adversarial/<lab>/). Each case states the verdict it must get and the
// defences that stop it (`// defence: a,b`). Every case runs twice:
//   Defended   : the real grader; the stated verdict must hold (no cheat passes, the grader
//                survives, the report is valid).
//   Undefended : the same with GPULAB_GRADER_DISABLE=<its defences>; the stated verdict must NOT
//                hold -- proof that the defence is what stops the cheat, not something else.
// A case is a file (the lab's source) or a folder (a hand-in laid out like the repository, with
// its expectations in a file named CASE).
#include <sys/stat.h>
#include <unistd.h>

#include "verdict_util.hpp"

namespace {

namespace fs = std::filesystem;

struct Case {
  std::string lab;
  fs::path path;
  verdict::Stated stated;
  bool defended = true;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.lab << "/" << c.path.filename().string() << (c.defended ? "" : " (defences off)");
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& lab : fs::directory_iterator(GPULAB_ADVERSARIAL_DIR)) {
    if (!lab.is_directory()) continue;
    std::vector<fs::path> entries;
    for (const auto& f : fs::directory_iterator(lab.path())) entries.push_back(f.path());
    std::sort(entries.begin(), entries.end());
    for (const auto& p : entries) {
      const fs::path text = fs::is_directory(p) ? p / "CASE" : p;
      if (!fs::is_regular_file(text) || (!fs::is_directory(p) && p.extension() != ".cu")) continue;
      const verdict::Stated s = verdict::parse(verdict::read(text), GPULAB_BACKEND_NAME);
      for (bool defended : {true, false}) cases.push_back({lab.path().filename().string(), p, s, defended});
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.lab.substr(0, 2) + "_" + info.param.path.stem().string() +
                  (info.param.defended ? "" : "_undefended");
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

class Adversarial : public ::testing::TestWithParam<Case> {};

TEST_P(Adversarial, Verdict) {
  const Case& c = GetParam();
  if (c.stated.expect.empty()) GTEST_SKIP() << "no verdict stated for the " << GPULAB_BACKEND_NAME << " back-end";
  ASSERT_FALSE(c.stated.defences.empty()) << c.path << " names no defence (// defence: ...)";
  for (const auto& tool : c.stated.needs)
    if (!verdict::has_tool(tool)) GTEST_SKIP() << "the stated verdict needs " << tool << ", which this machine lacks";
  const fs::path dir = fs::temp_directory_path() / ("gpulab-adv-" + std::to_string(::getpid()) + "-" +
                                                    c.path.stem().string() + (c.defended ? "" : "-off"));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path json = dir / "report.json";
  // Spoil the report path as the case asks: the grader must refuse it, not hang or follow it.
  if (c.stated.report == "fifo") {
    ASSERT_EQ(::mkfifo(json.c_str(), 0600), 0);
  } else if (c.stated.report == "symlink") {
    std::ofstream(dir / "elsewhere.json") << "{}";
    fs::create_symlink(dir / "elsewhere.json", json);
  } else if (c.stated.report == "missing-dir") {
    json = dir / "no" / "such" / "dir" / "report.json";
  }
  const std::string env = c.defended ? "" : "GPULAB_GRADER_DISABLE=" + c.stated.defences;
  // A fault case may leave a process behind when undefended: a time limit on the whole run. On a
  // GPU a grade also waits for the GPU lock behind the other grades ctest runs at once.
  if (!c.defended && c.stated.defences == "none") GTEST_SKIP() << "no defence to switch off";
  const std::string limit = c.stated.limit > 0                               ? std::to_string(c.stated.limit)
                            : std::string(GPULAB_BACKEND_NAME) == "emu" ? "120"
                                                                        : "600";
  const verdict::Outcome o = verdict::grade("timeout " + limit + " " + std::string(GPULAB_GRADER), c.lab,
                                            "--submission '" + c.path.string() + "'", c.stated.options, env, json,
                                            dir / "grader.log");
  const std::string unmet = verdict::unmet(o, c.stated.expect);
  if (c.defended) {
    EXPECT_EQ(unmet, "") << c.path << "\n--- grader output ---\n" << o.log;
    if (c.stated.report.empty())
      EXPECT_TRUE(o.report.is_object()) << "the grader must always write a valid report\n" << o.log;
  } else {
    EXPECT_NE(unmet, "") << c.path << ": with the defence '" << c.stated.defences
                         << "' switched off the stated verdict still holds, so that defence is not what stops it"
                         << "\n--- grader output ---\n" << o.log;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

INSTANTIATE_TEST_SUITE_P(Cases, Adversarial, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
