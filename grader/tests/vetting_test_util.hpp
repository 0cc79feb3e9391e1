// Helpers of the vetting tests: files, compiling tiny objects, message checks.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "process.hpp"
#include "vetting.hpp"

namespace vetting_test {

namespace fs = std::filesystem;
using gpulab::grade::ProcessResult;
using gpulab::grade::run_process;

inline const std::string kSource = GPULAB_TEST_SOURCE_DIR;
inline const std::string kBuild = GPULAB_TEST_BUILD_DIR;

inline std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}
inline void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

/// Every one of `parts` is in `text`.
inline ::testing::AssertionResult Has(const std::string& text, std::initializer_list<std::string> parts) {
  for (const auto& p : parts)
    if (text.find(p) == std::string::npos) return ::testing::AssertionFailure() << "no \"" << p << "\" in:\n" << text;
  return ::testing::AssertionSuccess();
}

class Vetting : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-vetting-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Compiles `code` (C++17, -O1 -g) into an object; `flags` are added. Named like the student's
  /// file, so that the line table names it and messages can give the line.
  std::string object(const std::string& code, const std::string& name = "row_sum.cu",
                     std::vector<std::string> flags = {}) {
    const fs::path src = dir_ / name, obj = dir_ / (name + ".o");
    write(src, code);
    std::vector<std::string> argv{GPULAB_TEST_CXX, "-x", "c++", "-std=c++17", "-O1", "-g", "-c", src.string(), "-o", obj.string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    const ProcessResult p = run_process(argv, {}, 120);
    EXPECT_TRUE(p.ok()) << p.output;
    return obj.string();
  }
  std::string symbols(const std::string& code, const std::set<std::string>& protect = {}) {
    return gpulab::grade::vetting::check_object_symbols({object(code)}, {"row_sum"}, protect, "row_sum.cu");
  }
  fs::path dir_;
};

}  // namespace vetting_test
