// The command line of gpulab-grade, run as built: bad values are usage errors (exit 2) that name
// the option and the value; a report that cannot be written is an error found before grading.
// Nothing here grades anything.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / ("gpulab-cli-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// Runs gpulab-grade with `args` (shell words); its exit status and its stdout and stderr.
std::pair<int, std::string> grader(const std::string& args, const std::string& env = "") {
  // Without GitHub's step summary: a CI run of these tests must not add to its own summary.
  const std::string cmd = "env -u GITHUB_STEP_SUMMARY " + env + " timeout 60 " + GPULAB_GRADER + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (std::size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = p ? ::pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

TEST(CommandLine, BadValuesAreUsageErrorsNamingTheOptionAndTheValue) {
  for (const auto& [args, option, value] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"grade --seed notanumber", "--seed", "notanumber"},
           {"grade --seed -1", "--seed", "-1"},
           {"grade --seed 18446744073709551616", "--seed", "18446744073709551616"},
           {"grade --warp-size 48", "--warp-size", "48"},
           {"grade --timeout -1", "--timeout", "-1"},
           {"grade --timeout 0", "--timeout", "0"},
           {"grade --impl teacher", "--impl", "teacher"},
           {"grade --no-such-option", "--no-such-option", ""},
           {"calibrate --runs 0", "--runs", "0"},
           {"grade no-such-lab", "no-such-lab", ""}}) {
    const auto [status, out] = grader(args);
    EXPECT_EQ(status, 2) << args << "\n" << out;
    EXPECT_NE(out.find(option), std::string::npos) << args << "\n" << out;
    EXPECT_NE(out.find(value), std::string::npos) << args << "\n" << out;
  }
  EXPECT_EQ(grader("grade --help").first, 0);
  EXPECT_EQ(grader("").first, 2);
}

TEST(CommandLine, AnUnwritableReportIsAnErrorBeforeGrading) {
  const fs::path dir = scratch("cli");
  auto [status, out] = grader("grade --json /nonexistent/dir/r.json");
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("gpulab grade: cannot write the JSON report to /nonexistent/dir/r.json: "), std::string::npos)
      << out;
  EXPECT_EQ(out.find("grading "), std::string::npos) << "grading started:\n" << out;

  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::tie(status, out) = grader("grade --junit " + fifo);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("cannot write the JUnit report to " + fifo), std::string::npos) << out;
  std::tie(status, out) = grader("grade --json " + (dir / "ok.json").string(), "GITHUB_STEP_SUMMARY=" + fifo);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("cannot write the GitHub step summary to " + fifo), std::string::npos) << out;

  // The JSON report was written before the JUnit one was refused: it says grading is incomplete.
  std::tie(status, out) =
      grader("grade 01 --json " + (dir / "ok.json").string() + " --junit " + (dir / "no" / "r.xml").string());
  EXPECT_EQ(status, 2) << out;
  json j = json::parse(read((dir / "ok.json").string()));
  EXPECT_EQ(j["complete"], false);
  ASSERT_EQ(j["labs"].size(), 1u);
  EXPECT_EQ(j["labs"][0]["status"], "not graded");
  fs::remove_all(dir);
}
