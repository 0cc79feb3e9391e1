// The emulated device's memory size: an allocation beyond it fails as on a GPU, with a message
// that says why, instead of filling the machine's memory until the OS kills the process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "emu_test_util.hpp"

using gpulab::DeviceBuffer;
namespace emu = gpulab::emu;

class DeviceMemory : public EmuTest {
 protected:
  void SetUp() override {
    EmuTest::SetUp();
    saved_ = emu::device_memory_bytes();
  }
  void TearDown() override {
    emu::set_device_memory_bytes(saved_);
    EmuTest::TearDown();
  }

 private:
  std::size_t saved_ = 0;
};
INSTANTIATE_TEST_SUITE_P(WarpSizes, DeviceMemory, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

TEST_P(DeviceMemory, AnAllocationBeyondItIsAnErrorThatSaysWhy) {
  ASSERT_EQ(emu::device_memory_used(), 0u) << "another test leaked device memory";
  emu::set_device_memory_bytes(std::size_t{12} << 30);
  EXPECT_EQ(gpulab::device_info().global_bytes, std::size_t{12} << 30);
  int line = 0;
  try {
    line = __LINE__; gpulab::device_malloc(std::size_t{100} << 30);
    ADD_FAILURE() << "a 100 GB allocation succeeded";
  } catch (const gpulab::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string(__FILE__) + ":" + std::to_string(line) +
                  ": device_malloc of 100 GB: the emulated device has 12 GB left of 12 GB (set "
                  "GPULAB_EMU_DEVICE_MEMORY_MB to change it); a GPU would fail this allocation too "
                  "(cudaErrorMemoryAllocation)");
  }
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, std::size_t{100} << 30), cudaErrorMemoryAllocation);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(cudaMalloc(&p, ~std::size_t{0}), cudaErrorMemoryAllocation) << "no wrap-around when rounding";
  EXPECT_EQ(emu::device_memory_used(), 0u);
}

TEST_P(DeviceMemory, LiveAllocationsCountAgainstIt) {
  emu::set_device_memory_bytes(std::size_t{8} << 20);
  DeviceBuffer<char> a(std::size_t{5} << 20);
  EXPECT_THROW(DeviceBuffer<char> b(std::size_t{5} << 20), gpulab::Error);
  { DeviceBuffer<char> c(std::size_t{3} << 20); }
  a = DeviceBuffer<char>();  // freed: the whole size is available again
  DeviceBuffer<char> d(std::size_t{8} << 20);
  EXPECT_EQ(emu::device_memory_used(), std::size_t{8} << 20);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, 1), cudaErrorMemoryAllocation);
}

TEST_P(DeviceMemory, DefaultIsHalfTheMemoryAtMost16GiB) {
  if (std::getenv("GPULAB_EMU_DEVICE_MEMORY_MB")) GTEST_SKIP() << "set by the environment";
  EXPECT_GT(emu::device_memory_bytes(), 0u);
  EXPECT_LE(emu::device_memory_bytes(), std::size_t{16} << 30);
  EXPECT_EQ(gpulab::device_info().global_bytes, emu::device_memory_bytes());
}

// Run by its own ctest entry with GPULAB_EMU_DEVICE_MEMORY_MB=64 (tests/CMakeLists.txt).
TEST_P(DeviceMemory, SizeComesFromTheEnvironment) {
  const char* mb = std::getenv("GPULAB_EMU_DEVICE_MEMORY_MB");
  if (!mb) GTEST_SKIP() << "GPULAB_EMU_DEVICE_MEMORY_MB is not set";
  EXPECT_EQ(emu::device_memory_bytes(), static_cast<std::size_t>(std::atoll(mb)) << 20);
  EXPECT_EQ(gpulab::device_info().global_bytes, emu::device_memory_bytes());
  try {
    DeviceBuffer<float> too_big(std::size_t{100} << 20);
    ADD_FAILURE() << "a 400 MB buffer fit in " << mb << " MB";
  } catch (const gpulab::Error& e) {
    EXPECT_NE(std::string(e.what()).find("device_malloc of 400 MB: the emulated device has " + std::string(mb) +
                                         " MB left of " + std::string(mb) + " MB"),
              std::string::npos)
        << e.what();
  }
}
