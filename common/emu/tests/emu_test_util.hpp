// Helpers shared by the emulator's tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "gpulab/gpu.hpp"
#include "gpulab/host.hpp"

/// Runs each test at the warp size given as the test parameter.
class EmuTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    saved_ = gpulab::emu::warp_size();
    gpulab::emu::set_warp_size(GetParam());
    (void)gpulab::emu::take_pending_fault();
    gpulab::emu::cuda_reset_errors();  // the CUDA shim's sticky error lasts for the process
  }
  void TearDown() override {
    (void)gpulab::emu::take_pending_fault();
    gpulab::emu::cuda_reset_errors();
    gpulab::emu::set_warp_size(saved_);
  }

  /// Expects that the last launch faulted with `kind`; returns the message.
  static std::string expect_fault(const std::string& kind) {
    try {
      gpulab::synchronize();
    } catch (const gpulab::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("(" + kind + ")"), std::string::npos) << what;
      return what;
    }
    ADD_FAILURE() << "expected a fault of kind " << kind << ", the kernel ran cleanly";
    return {};
  }

  /// Line of the k-th (1-based) occurrence of `needle` inside the body of function `name` in
  /// this test's source file: keeps line-number assertions valid when the file is edited.
  static int line_of(const std::string& name, int k, const std::string& needle = "__syncthreads",
                     const char* file = __builtin_FILE()) {
    std::ifstream in(file);
    std::string text;
    int line = 0;
    bool inside = false;
    while (std::getline(in, text)) {
      ++line;
      if (!inside && text.find("void " + name + "(") != std::string::npos) inside = true;
      else if (inside && text.find(needle) != std::string::npos && --k == 0) return line;
    }
    return -1;
  }

 private:
  int saved_ = 32;
};

/// Sets the number of emulator workers for a scope.
class WorkerCount {
 public:
  explicit WorkerCount(int n) : saved_(gpulab::emu::workers()) { gpulab::emu::set_workers(n); }
  ~WorkerCount() { gpulab::emu::set_workers(saved_); }

 private:
  int saved_;
};
