// The emulator library binds its calls to its own functions at link time (-Bsymbolic-functions):
// this executable defines functions of the library's (what a submission could do to escape the
// emulator's checks), and the library's own code still uses its own. Its own executable, since
// the definitions below would change every other test.
//
// What it does not protect, shown here too: the executable's own calls bind to the executable's
// definitions (the grader refuses submissions that define gpulab::emu functions).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emu_test_util.hpp"
#include "gpulab/emu/metrics.hpp"

namespace {
int g_fake_on_access_calls = 0;
}

// Same names and signatures as the library's. Without -Bsymbolic-functions, the library's tracing
// entry points (__sanitizer_cov_load4, ...) would call this on_access instead of their own (no
// metrics, no sanitizer), and launch_blocks would call this fault_pending and skip every launch.
namespace gpulab::emu {
long long findings_total() { return -42; }
bool fault_pending() { return true; }
namespace detail {
// Counted with an atomic, which the tracing reaches without on_access: were the library to call
// this on_access, a traced store here would call it again.
void on_access(const void*, unsigned, bool, void*) { __atomic_fetch_add(&g_fake_on_access_calls, 1, __ATOMIC_RELAXED); }
}  // namespace detail
}  // namespace gpulab::emu

namespace emu = gpulab::emu;

__global__ void store_one_past_the_end(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.0f;
}

class Symbolic : public EmuTest {};
INSTANTIATE_TEST_SUITE_P(WarpSizes, Symbolic, ::testing::Values(32, 64),
                         [](const auto& info) { return "warp" + std::to_string(info.param); });

TEST_P(Symbolic, TheLibraryKeepsUsingItsOwnFunctions) {
  emu::reset_findings();
  gpulab::DeviceBuffer<float> out(std::vector<float>(100, 0.0f));
  gpulab::launch(store_one_past_the_end, 1, 128, 0, out.data(), 100);
  // The store past the end stops the kernel (a fault, taken here) after the 100 stores before it.
  (void)emu::take_pending_fault();
  // The kernel ran: the library's launch_blocks asked its own fault_pending().
  EXPECT_EQ(out.download(), std::vector<float>(100, 1.0f));
  // Its stores were traced by the library's own on_access.
  EXPECT_EQ(g_fake_on_access_calls, 0);
  if (emu::metrics_available()) {
    const auto found = emu::findings();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].kind, "out-of-bounds");
  }
}

TEST_P(Symbolic, TheExecutablesOwnCallsUseItsOwnDefinitions) {
  EXPECT_EQ(emu::findings_total(), -42) << "not protected: such submissions are refused by the grader";
  EXPECT_TRUE(emu::fault_pending());
}
