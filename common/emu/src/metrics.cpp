#include "internal.hpp"
namespace gpulab::emu::detail {
void on_access(const void*, unsigned, bool, void*) {}
}
