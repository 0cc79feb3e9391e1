// The grader's cache of what tools say about unchanging files (tool_cache.hpp): asked once per
// version of its inputs; a changed input, a relative path or no directory asks again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tool_cache.hpp"

using namespace gpulab::grade;
namespace fs = std::filesystem;

namespace {

struct ToolCache : testing::Test {
  fs::path dir = fs::path(testing::TempDir()) / ("gpulab-tool-cache-" + std::to_string(::getpid()));
  fs::path input = dir / "lib.a";
  int asked = 0;
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(input) << "version 1";
    tool_cache::set_directory((dir / "cache").string());
  }
  void TearDown() override {
    tool_cache::set_directory("");
    fs::remove_all(dir);
  }
  std::string ask(const std::string& answer, const std::string& in) {
    return tool_cache::output({"nm", "-P", in}, {in}, [&] {
             ++asked;
             return std::optional<std::string>(answer);
           }).value_or("<none>");
  }
};

TEST_F(ToolCache, AnUnchangedInputIsAskedOnce) {
  EXPECT_EQ(ask("symbols v1", input.string()), "symbols v1");
  EXPECT_EQ(ask("not asked", input.string()), "symbols v1");
  EXPECT_EQ(asked, 1);
}

TEST_F(ToolCache, AChangedInputIsAskedAgain) {
  EXPECT_EQ(ask("symbols v1", input.string()), "symbols v1");
  std::ofstream(input) << "version 2, longer";  // another size and time
  EXPECT_EQ(ask("symbols v2", input.string()), "symbols v2");
  // the same size, only the modification time moved
  std::ofstream(input) << "version 3, longer";
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, input.c_str(), times, 0), 0);
  EXPECT_EQ(ask("symbols v3", input.string()), "symbols v3");
  EXPECT_EQ(asked, 3);
}

TEST_F(ToolCache, ARelativePathOrNoDirectoryIsNeverCached) {
  const fs::path here = fs::current_path();
  fs::current_path(dir);
  EXPECT_EQ(ask("a", "lib.a"), "a");
  EXPECT_EQ(ask("b", "lib.a"), "b");
  fs::current_path(here);
  tool_cache::set_directory("");
  EXPECT_EQ(ask("c", input.string()), "c");
  EXPECT_EQ(ask("d", input.string()), "d");
  EXPECT_EQ(asked, 4);
}

TEST_F(ToolCache, AToolThatFailsIsAskedAgain) {
  auto failing = [&] {
    ++asked;
    return std::optional<std::string>();
  };
  EXPECT_FALSE(tool_cache::output({"nm", input.string()}, {input.string()}, failing));
  EXPECT_FALSE(tool_cache::output({"nm", input.string()}, {input.string()}, failing));
  EXPECT_EQ(asked, 2);
}

TEST_F(ToolCache, AnotherCommandOnTheSameFileIsAnotherEntry) {
  EXPECT_EQ(ask("static", input.string()), "static");
  const auto dynamic = tool_cache::output({"nm", "-P", "-D", input.string()}, {input.string()}, [&] {
    ++asked;
    return std::optional<std::string>("dynamic");
  });
  EXPECT_EQ(dynamic.value_or(""), "dynamic");
  EXPECT_EQ(asked, 2);
}

}  // namespace
