// How the emulator switches between its fibers (one per GPU thread): Boost.Context's fcontext
// (fast, hand-written assembly in the compiled libboost_context), or, where that library is not
// installed (only Boost's headers, as on some GPU machines), the same two calls over POSIX
// ucontext (slower: every switch saves the signal mask, which is a system call).
#pragma once

#include <cstddef>

#if defined(GPULAB_EMU_UCONTEXT)
namespace gpulab::emu::detail::ucontext_fibers {
using fcontext_t = void*;
struct transfer_t {
  fcontext_t fctx;  ///< the context that jumped here (resume it to go back)
  void* data;
};
/// A context that runs fn on the stack [sp - size, sp) when first jumped to; fn never returns.
fcontext_t make_fcontext(void* sp, std::size_t size, void (*fn)(transfer_t));
/// Suspends the caller and resumes `to`; returns when something jumps back.
transfer_t jump_fcontext(fcontext_t to, void* data);
}  // namespace gpulab::emu::detail::ucontext_fibers
namespace gpulab::emu::detail {
namespace ctx = ucontext_fibers;
}
#else
#include <boost/context/detail/fcontext.hpp>
namespace gpulab::emu::detail {
namespace ctx = boost::context::detail;
}
#endif
