// The tile search's write-back (bench/tuned_config.hpp) on the real sgemm_configs.hpp: the
// winner replaces LargeConfig and kRasterRows, the comment above it names the measurement, a
// second write replaces the first (no comments pile up), the rest of the file is left as it was,
// and a file without the lines to replace is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tuned_config.hpp"

namespace {

std::string configs_file() {
  std::ifstream in(SGEMM_CONFIGS_HPP);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TunedConfig, TheWinnerReplacesLargeConfigAndTheRasterOrder) {
  const std::string before = configs_file();
  ASSERT_NE(before.find("using LargeConfig = TileConfig<"), std::string::npos);
  const std::string after =
      sgemm_tuned::rewrite(before, "128, 128, 8, 32, 128, 8, 16, 1", 4, "NVIDIA H200, 4096^3: 49.26 TFLOP/s");
  EXPECT_EQ(count(after, "using LargeConfig = TileConfig<128, 128, 8, 32, 128, 8, 16, 1>;"), 1);
  EXPECT_EQ(count(after, "constexpr int kRasterRows = 4;"), 1);
  EXPECT_EQ(count(after, "// Chosen by sgemm_tune --write: NVIDIA H200, 4096^3: 49.26 TFLOP/s\n"), 1);
  // SmallConfig and everything else stay.
  const auto small = before.find("using SmallConfig");
  ASSERT_NE(small, std::string::npos);
  EXPECT_NE(after.find(before.substr(small, before.find('\n', small) - small)), std::string::npos);
  EXPECT_EQ(count(after, "\n"), count(before, "\n") + 1);  // the marker line only
}

TEST(TunedConfig, ASecondWriteReplacesTheFirst) {
  const std::string once = sgemm_tuned::rewrite(configs_file(), "64, 64, 8, 32, 32, 8, 4, 4", 8, "first");
  const std::string twice = sgemm_tuned::rewrite(once, "128, 128, 8, 64, 64, 8, 16, 2", 16, "second");
  EXPECT_EQ(count(twice, sgemm_tuned::kMarker), 1);
  EXPECT_EQ(count(twice, "second"), 1);
  EXPECT_EQ(count(twice, "first"), 0);
  EXPECT_EQ(count(twice, "using LargeConfig = TileConfig<128, 128, 8, 64, 64, 8, 16, 2>;"), 1);
  EXPECT_EQ(count(twice, "constexpr int kRasterRows = 16;"), 1);
  EXPECT_EQ(count(twice, "\n"), count(configs_file(), "\n") + 1);
}

TEST(TunedConfig, AFileWithoutTheLinesIsRefused) {
  EXPECT_THROW(sgemm_tuned::rewrite("// nothing here\n", "1, 2, 3, 4, 5, 6, 7, 8", 8, "x"), std::runtime_error);
  EXPECT_THROW(sgemm_tuned::rewrite("using LargeConfig = TileConfig<1>;\n", "1", 8, "x"), std::runtime_error);
}

}  // namespace
