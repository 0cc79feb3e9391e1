// The legitimate-idioms corpus (grader/tests/idioms/<lab>/*.cu): correct, ordinary CUDA, each file
// a complete hand-in that uses one idiom (a deduced kernel template, extern "C" kernels, the
// occupancy API, __constant__ memory, streams ...) and is as fast as the lab's reference. Each is
// graded by the real grader and must get full marks: every check passed, score == max_score, and
// the verdict its `// expect:` lines state. A defence that refuses correct CUDA fails here.
#include "verdict_util.hpp"

namespace {

namespace fs = std::filesystem;

struct Idiom {
  std::string lab;
  fs::path file;
  verdict::Stated stated;
};

void PrintTo(const Idiom& c, std::ostream* os) { *os << c.lab << "/" << c.file.filename().string(); }

std::vector<Idiom> all_idioms() {
  std::vector<Idiom> out;
  for (const auto& lab : fs::directory_iterator(GPULAB_IDIOMS_DIR)) {
    if (!lab.is_directory()) continue;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(lab.path()))
      if (f.path().extension() == ".cu") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      out.push_back({lab.path().filename().string(), f, verdict::parse(verdict::read(f), GPULAB_BACKEND_NAME)});
  }
  return out;
}

class Idioms : public ::testing::TestWithParam<Idiom> {};

TEST_P(Idioms, GetFullMarks) {
  const Idiom& c = GetParam();
  const std::string text = verdict::read(c.file);
  ASSERT_EQ(text.rfind("// Idiom: ", 0), 0u) << c.file << " must start with `// Idiom: ` saying what it exercises";
  ASSERT_FALSE(c.stated.expect.empty()) << c.file << " states no verdict (// expect: lab pass)";
  if (std::string(GPULAB_BACKEND_NAME) == "emu")
    for (const std::string& tool : c.stated.needs)
      if (!verdict::has_tool(tool)) GTEST_SKIP() << c.file << " needs " << tool << ", which this machine lacks";
  const fs::path dir = fs::temp_directory_path() / ("gpulab-idiom-" + std::to_string(::getpid()) + "-" + c.file.stem().string());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const verdict::Outcome o = verdict::grade(GPULAB_GRADER, c.lab, "--submission '" + c.file.string() + "'",
                                            c.stated.options, "env -u GITHUB_STEP_SUMMARY", dir / "report.json",
                                            dir / "grader.log");
  const std::string why = verdict::unmet(o, c.stated.expect);
  EXPECT_EQ(why, "") << o.log;
  ASSERT_TRUE(o.report.is_object() && o.report.contains("labs") && !o.report["labs"].empty()) << o.log;
  const auto& lab = o.report["labs"][0];
  EXPECT_EQ(lab.value("status", ""), "graded") << o.log;
  EXPECT_TRUE(lab.value("passed", false)) << o.log;
  EXPECT_GT(lab.value("max_score", 0.0), 0.0) << o.log;
  EXPECT_EQ(lab.value("score", -1.0), lab.value("max_score", 0.0)) << "not full marks:\n" << o.log;
  for (const auto& check : lab.value("checks", nlohmann::json::array()))
    EXPECT_TRUE(check.value("passed", false)) << check.value("name", "") << ": " << check.value("message", "");
  EXPECT_EQ(o.exit_status, 0) << o.log;
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Corpus, Idioms, ::testing::ValuesIn(all_idioms()), [](const auto& info) {
  std::string name = info.param.lab.substr(0, 2) + "_" + info.param.file.stem().string();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

}  // namespace
