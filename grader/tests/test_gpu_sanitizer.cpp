// compute-sanitizer's text reports, as the grader reads them into findings. The reports below
// follow the layout compute-sanitizer prints (each line prefixed with "========="); the GPU run
// of the verdict suite checks the real thing (docs/results/).
#include <gtest/gtest.h>

#include "gpu_sanitizer.hpp"

namespace {

using gpulab::grade::parse_compute_sanitizer;

TEST(GpuSanitizer, AnOutOfBoundsWriteSaysWhereWhoAndHowFar) {
  const std::string out =
      "========= COMPUTE-SANITIZER\n"
      "seed 1\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at rows(const float *, float *, int)+0x2b0 in /h/a b/row_sum.cu:27\n"
      "=========     by thread (1,0,0) in block (0,0,0)\n"
      "=========     Address 0x7f0000000004 is out of bounds\n"
      "=========     and is 1 bytes after the nearest allocation at 0x7f0000000000 of size 4 bytes\n"
      "=========\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at rows(const float *, float *, int)+0x2b0 in /h/a b/row_sum.cu:27\n"
      "=========     by thread (2,0,0) in block (0,0,0)\n"
      "=========     Address 0x7f0000000008 is out of bounds\n"
      "=========\n"
      "========= ERROR SUMMARY: 2 errors\n";
  const auto f = parse_compute_sanitizer("memcheck", out);
  ASSERT_EQ(f.size(), 1u) << f.dump(1);  // the same write, collapsed
  EXPECT_EQ(f[0]["kind"], "out-of-bounds");
  EXPECT_EQ(f[0]["count"], 2);
  const std::string m = f[0]["message"];
  for (const char* part : {"Invalid __global__ write of size 4 bytes at /h/a b/row_sum.cu:27", "kernel rows",
                           "block (0,0,0), thread (1,0,0)", "1 bytes after the nearest allocation"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
}

TEST(GpuSanitizer, ARaceNamesBothAccesses) {
  const std::string out =
      "========= COMPUTE-SANITIZER\n"
      "========= Error: Race reported between Write access at rows(const float *, float *, int)+0x1f0 in /h/r.cu:20\n"
      "=========     and Read access at rows(const float *, float *, int)+0x230 in /h/r.cu:21 [248 hazards]\n"
      "=========     and Read access at rows(const float *, float *, int)+0x230 in /h/r.cu:21 [3 hazards]\n"
      "========= Warning: Error buffer overflow has been detected. Some records have been dropped.\n"
      "=========\n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";
  const auto f = parse_compute_sanitizer("racecheck", out);
  ASSERT_EQ(f.size(), 1u) << f.dump(1);
  EXPECT_EQ(f[0]["kind"], "race");
  const std::string m = f[0]["message"];
  EXPECT_NE(m.find("Write at /h/r.cu:20 and Read at /h/r.cu:21 (kernel"), std::string::npos) << m;  // once
  EXPECT_NE(m.find("kernel rows"), std::string::npos) << m;
  EXPECT_NE(m.find("251 hazards"), std::string::npos) << m;
}

TEST(GpuSanitizer, BarriersUninitialisedReadsAndApiErrorsHaveTheirKinds) {
  EXPECT_EQ(parse_compute_sanitizer("synccheck",
                                    "========= Barrier error detected. Divergent thread(s) in block\n"
                                    "=========     at k()+0x10 in /h/s.cu:9\n"
                                    "=========     by thread (0,0,0) in block (3,0,0)\n")[0]["kind"],
            "divergent-barrier");
  EXPECT_EQ(parse_compute_sanitizer("initcheck",
                                    "========= Uninitialized __global__ memory read of size 4 bytes\n"
                                    "=========     at k()+0x10 in /h/s.cu:9\n")[0]["kind"],
            "uninitialised-read");
  EXPECT_EQ(parse_compute_sanitizer("memcheck",
                                    "========= Invalid __global__ read of size 16 bytes\n"
                                    "=========     at rows(const float *)+0x90 in /h/f.cu:16\n"
                                    "=========     Address 0x7fe8d4800bbc is misaligned\n")[0]["kind"],
            "misaligned-access");
  EXPECT_EQ(parse_compute_sanitizer("memcheck",
                                    "========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on "
                                    "CUDA API call to cudaMemcpy.\n")[0]["kind"],
            "api-error");
}

TEST(GpuSanitizer, ACleanRunHasNoFindingsAndAnUnreadableOneStillHasOne) {
  EXPECT_TRUE(parse_compute_sanitizer("memcheck", "========= COMPUTE-SANITIZER\nseed 3\n"
                                                  "========= ERROR SUMMARY: 0 errors\n")
                  .empty());
  const auto f = parse_compute_sanitizer("memcheck", "========= COMPUTE-SANITIZER\n=========\n"
                                                     "========= ERROR SUMMARY: 3 errors\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["count"], 3);
}

}  // namespace
