// fcontext's make/jump over POSIX ucontext (see fiber_context.hpp): built when libboost_context
// is not installed.
#include <ucontext.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "fiber_context.hpp"

namespace gpulab::emu::detail::ucontext_fibers {
namespace {

struct Context {
  ucontext_t uc;
  void (*fn)(transfer_t) = nullptr;
};

// What the jump hands over; read right after the switch, on the same thread.
thread_local transfer_t t_transfer{nullptr, nullptr};
thread_local Context* t_starting = nullptr;

void trampoline() {
  Context* self = t_starting;
  self->fn(t_transfer);
  std::abort();  // a fiber's function jumps away for good, it never returns
}

}  // namespace

fcontext_t make_fcontext(void* sp, std::size_t size, void (*fn)(transfer_t)) {
  // The context's own record sits at the top of its stack, below it the stack proper.
  auto top = reinterpret_cast<std::uintptr_t>(sp);
  const std::uintptr_t record = (top - sizeof(Context)) & ~std::uintptr_t{63};
  auto* c = new (reinterpret_cast<void*>(record)) Context;
  if (::getcontext(&c->uc) != 0) std::abort();
  const std::uintptr_t bottom = top - size;
  c->uc.uc_stack.ss_sp = reinterpret_cast<void*>(bottom);
  c->uc.uc_stack.ss_size = (record - bottom) & ~std::uintptr_t{15};
  c->uc.uc_link = nullptr;
  c->fn = fn;
  ::makecontext(&c->uc, trampoline, 0);
  return c;
}

transfer_t jump_fcontext(fcontext_t to, void* data) {
  Context here;  // the caller, while it is suspended (this frame lives until it is resumed)
  auto* target = static_cast<Context*>(to);
  t_transfer = {&here, data};
  t_starting = target;
  if (::swapcontext(&here.uc, &target->uc) != 0) std::abort();
  return t_transfer;
}

}  // namespace gpulab::emu::detail::ucontext_fibers
