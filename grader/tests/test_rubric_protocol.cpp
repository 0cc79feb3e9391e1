// The grader's building blocks: rubric files, the lab-process protocol, error-analysis tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "gpulab/grade/compare.hpp"
#include "gpulab/grade/protocol.hpp"
#include "gpulab/grade/rubric.hpp"

using namespace gpulab::grade;

TEST(Rubric, ReadsSectionsNumbersListsAndComments) {
  const std::string path = testing::TempDir() + "rubric_test.ini";
  std::ofstream(path) << "; comment\n[lab]\ntitle = Row sums  \ntimeout_seconds = 90\n\n[performance.cuda]\n"
                         "sizes = 4096, 16384 ; inline comment\nmin = 0.6\n";
  const Rubric r = Rubric::load(path);
  EXPECT_EQ(r.text_or("lab", "title", ""), "Row sums");
  EXPECT_DOUBLE_EQ(r.number("lab", "timeout_seconds"), 90);
  EXPECT_EQ(r.numbers("performance.cuda", "sizes"), (std::vector<double>{4096, 16384}));
  EXPECT_DOUBLE_EQ(r.number_or("points", "correctness", 7), 7);
  EXPECT_THROW(r.number("performance.cuda", "absent"), std::runtime_error);
}

TEST(Rubric, MalformedLinesNameFileAndLine) {
  const std::string path = testing::TempDir() + "rubric_bad.ini";
  std::ofstream(path) << "[lab]\nthis line has no equals sign\n";
  try {
    Rubric::load(path);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rubric_bad.ini:2"), std::string::npos) << e.what();
  }
}

TEST(Protocol, FieldsSurviveTabsNewlinesAndBackslashes) {
  const std::vector<std::string> fields{"check", "a\tb", "line1\nline2", "back\\slash", ""};
  std::string line = protocol::join(fields);
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  EXPECT_EQ(protocol::split(line), fields);
}

TEST(Tolerance, GammaBoundGrowsWithLength) {
  EXPECT_NEAR(gamma_bound(1), 5.96e-8, 1e-10);
  EXPECT_GT(gamma_bound(1000), 999 * gamma_bound(1));
  EXPECT_TRUE(std::isinf(gamma_bound(1e9)));
}

TEST(Compare, NaNAndInfinityNeverPass) {
  const std::vector<double> ref{1, 2, 3}, tol{1e9, 1e9, 1e9};
  auto name = [](std::size_t i) { return "x[" + std::to_string(i) + "]"; };
  EXPECT_TRUE(compare_all({1, 2, 3}, ref, tol, name).ok);
  const auto nan = compare_all({1, NAN, 3}, ref, tol, name);
  EXPECT_FALSE(nan.ok);
  EXPECT_EQ(nan.first_bad, 1u);
  EXPECT_NE(nan.first_message.find("NaN"), std::string::npos);
  EXPECT_FALSE(compare_all({INFINITY, 2, 3}, ref, tol, name).ok);
}

TEST(Compare, EveryElementIsChecked) {
  std::vector<float> got(1000, 1.0f);
  std::vector<double> ref(1000, 1.0), tol(1000, 1e-6);
  got[999] = 1.01f;
  auto c = compare_all(got, ref, tol, [](std::size_t i) { return std::to_string(i); });
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.checked, 1000u);
  EXPECT_EQ(c.first_bad, 999u);
}
