//===- device_pass.cpp - gpulab: every access of a kernel file traced -----===//
//
// LLVM 14 new-pass-manager plugin ("GpulabDeviceCode"), loaded for every kernel file of the emu
// back-end compiled with access tracing (-fsanitize-coverage=func,trace-loads,trace-stores;
// kernel.hpp then defines the marker gpulab_emu_traced_file). It runs at the end of the
// optimisation pipeline: clang registers a plugin's OptimizerLastEP callbacks before its own
// SanitizerCoverage, and this plugin is loaded before the twin pass's, so it sees the optimised
// code as SanitizerCoverage will, before any twin exists.
//
// SanitizerCoverage traces each load and store of 1, 2, 4, 8 or 16 bytes in the functions it
// instruments, and nothing else. It leaves out (LLVM 14): functions marked nosanitize_coverage
// (`__attribute__((no_sanitize("coverage")))`, directly or through `#pragma clang attribute`) or
// disable_sanitizer_instrumentation; functions whose entry block ends in `unreachable` (a helper
// that stores and then throws); functions named __sanitizer_* or *.module_ctor; loads and stores
// of other sizes (a long double, a 12- or 32-byte vector); atomicrmw and cmpxchg; memcpy, memmove
// and memset (calls, and the intrinsics the compiler makes of aggregate copies); and whatever
// library functions and inline assembly touch. So that every byte a kernel touches is seen:
//   * refused, with an error at the function's line (rule "instrumentation"): the attributes and
//     names above, naked functions, inline assembly, and intrinsics that touch memory in ways
//     that are not traced (x86 masked loads, gathers, ...);
//   * traced, by a call of the emulator before the instruction (common/emu/src/device_calls.cpp):
//     accesses of other sizes (gpulab_emu_device_access), atomic instructions
//     (gpulab_emu_device_atomic); and an entry block that ends in `unreachable` gets a block of
//     its own before it, so that SanitizerCoverage instruments the function;
//   * rewritten (rule "device-calls"): memcpy / memmove / memset of a known length up to 64 bytes
//     become loads and stores (which SanitizerCoverage traces; a struct copy stays inline), longer
//     ones calls of gpulab_emu_device_memcpy / _memset, which trace each piece at the call's line;
//     a call of a library function that is not device code on a GPU (strlen, qsort, sprintf, ...)
//     is preceded by gpulab_emu_device_host_call, which stops a kernel that makes it (host code
//     calls it as before); a math function's output arguments are traced as stores; a call
//     through a pointer is preceded by gpulab_emu_device_indirect_call, which lets a kernel call
//     only functions of traced kernel files (registered by a constructor this pass adds) and the
//     math library.
// Host code and device code share a kernel file and are told apart at run time: the emulator's
// calls know whether a kernel is running.
//
// GPULAB_EMU_DISABLE=instrumentation / =device-calls (the grader's adversarial suite) switch the
// two rules off.
//===----------------------------------------------------------------------===//

#define GPULAB_PASS_ABI_NAMES_ONLY
#include "gpulab/emu/pass_abi.hpp"  // the runtime functions this pass calls
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;

namespace {

bool rule_on(const char *name) {
  const char *off = std::getenv("GPULAB_EMU_DISABLE");
  if (!off || !*off)
    return true;
  const std::string list = std::string(",") + off + ",";
  return list.find(std::string(",") + name + ",") == std::string::npos && list.find(",all,") == std::string::npos;
}

std::string readable(StringRef mangled) {
  int status = 0;
  char *d = abi::__cxa_demangle(mangled.str().c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : mangled.str();
  std::free(d);
  return out;
}

/// An error of the compile, at the function's line (clang prints it as `file:line: error: ...`).
void refuse(Function &F, const Instruction *I, const Twine &why) {
  const std::string text = ("'" + readable(F.getName()) + "' " + why +
                            " (rule: instrumentation); hint: every function of a kernel file is traced by the"
                            " emulator, so that its memory metrics and sanitizer see every access; write it in"
                            " plain CUDA C++")
                               .str();
  if (I && I->getDebugLoc())
    F.getContext().diagnose(DiagnosticInfoUnsupported(F, text, I->getDebugLoc()));
  else
    F.getContext().diagnose(DiagnosticInfoUnsupported(F, text, DiagnosticLocation(F.getSubprogram())));
}

// ---- library functions -------------------------------------------------------------------

bool any_of_words(StringRef name, const char *words) {
  StringRef rest(words);
  while (!rest.empty()) {
    auto [w, tail] = rest.split(' ');
    if (!w.empty() && name == w)
      return true;
    rest = tail;
  }
  return false;
}

/// libm's functions (with their f and l forms and glibc's __*_finite names).
bool math_function(StringRef name) {
  static const char *const kMath =
      "sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 exp10 expm1 log log2 log10 "
      "log1p logb ilogb pow sqrt cbrt hypot erf erfc erfinv tgamma lgamma lgamma_r gamma ceil floor trunc round "
      "lround llround rint lrint llrint nearbyint fmod remainder remquo fma fmax fmin fdim fabs copysign nan "
      "nextafter nexttoward frexp ldexp modf scalbn scalbln sincos j0 j1 jn y0 y1 yn";
  StringRef n = name;
  if (n.consume_front("__") && n.consume_back("_finite")) {
  } else {
    n = name;
  }
  if (any_of_words(n, kMath))
    return true;
  if ((n.endswith("f") || n.endswith("l")) && any_of_words(n.drop_back(), kMath))
    return true;
  return any_of_words(name, "__isnan __isnanf __isinf __isinff __finite __finitef __fpclassify __fpclassifyf "
                            "__signbit __signbitf __sincos __sincosf");
}

/// Functions a kernel may call, that touch no memory the tracing misses (or only memory that is
/// never device memory: the heap, the exception's).
bool device_function(StringRef name) {
  // The emulator's kernel vocabulary (gpulab/emu/runtime.hpp), the tracing's own hooks and the
  // other passes' calls.
  static const char *const kEmulator[] = {"10sync_block",  "15warp_collective", "14shuffle_source",
                                          "11active_mask", "10live_lanes",      "19dynamic_shared_base",
                                          "11note_atomic", "12atomic_apply",    "12thread_fence",
                                          "16async_copy_issue", "17async_copy_commit", "15async_copy_wait",
                                          "11kernel_stop"};
  if (name.startswith("_ZN6gpulab3emu"))
    for (const char *k : kEmulator)
      if (name.substr(strlen("_ZN6gpulab3emu")).startswith(k))
        return true;
  if (name.startswith(gpulab::emu::pass_abi::prefix) || name.startswith("__sanitizer_cov_") || name == "_Z7clock64v")
    return true;
  // printf (CUDA has it in device code), allocation (device malloc), asserts and aborts, the C++
  // runtime's exceptions and guards, and the compiler's own arithmetic helpers.
  if (any_of_words(name, "printf vprintf puts putchar malloc calloc realloc free abort __assert_fail "
                         "__assert_perror_fail __stack_chk_fail __errno_location _Unwind_Resume "
                         "_ZSt9terminatev __clang_call_terminate __cxa_pure_virtual"))
    return true;
  for (const char *p : {"__cxa_", "_Znw", "_Zna", "_Zdl", "_Zda", "__powi", "__mul", "__div", "__udiv", "__umod",
                        "__mod", "__extend", "__trunc", "__fix", "__float", "__gnu_h2f", "__gnu_f2h", "__popcount",
                        "__bswap", "__clz", "__ctz"})
    if (name.startswith(p))
      return true;
  if (name.startswith("_ZSt") && name.contains("__throw_"))  // std::__throw_length_error & co.: they throw
    return true;
  return math_function(name);
}

bool memory_function(StringRef name, bool &is_set) {
  is_set = any_of_words(name, "memset __memset_chk");
  return is_set || any_of_words(name, "memcpy memmove mempcpy __memcpy_chk __memmove_chk __mempcpy_chk");
}

// ---- the rewrite ---------------------------------------------------------------------------

struct Rewriter {
  Module &M;
  bool instrumentation, device_calls;
  LLVMContext &C = M.getContext();
  Type *I8P = Type::getInt8PtrTy(C);
  Type *I64 = Type::getInt64Ty(C);
  Type *I32 = Type::getInt32Ty(C);
  Type *Void = Type::getVoidTy(C);
  const DataLayout &DL = M.getDataLayout();
  bool failed = false;

  FunctionCallee helper(const char *name, ArrayRef<Type *> params) {
    return M.getOrInsertFunction(name, FunctionType::get(Void, params, false));
  }
  Value *i8p(IRBuilder<> &B, Value *p) { return B.CreatePointerCast(p, I8P); }

  /// `trace(p, bytes, flags)` before I: a load or store SanitizerCoverage does not trace.
  void trace_access(Instruction *I, Value *Ptr, uint64_t bytes, bool store) {
    IRBuilder<> B(I);
    B.CreateCall(helper(gpulab::emu::pass_abi::device_access, {I8P, I64, I32}),
                 {i8p(B, Ptr), ConstantInt::get(I64, bytes), ConstantInt::get(I32, store ? 1 : 0)});
  }

  static bool traced_size(uint64_t bits) { return bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128; }

  /// memcpy / memmove / memset of a known length up to 64 bytes as loads and stores (traced by
  /// SanitizerCoverage), in pieces as wide as the alignment allows; longer ones as calls.
  void rewrite_memory(CallBase *CB, bool is_set, Value *Dst, Value *Src, Value *Len, Value *Val, uint64_t align,
                      bool is_volatile) {
    IRBuilder<> B(CB);
    align = std::max<uint64_t>(1, std::min<uint64_t>(align, 16));
    auto *CL = dyn_cast<ConstantInt>(Len);
    if (CL && CL->getZExtValue() <= 64) {
      const uint64_t n = CL->getZExtValue();
      SmallVector<std::pair<uint64_t, uint64_t>, 16> pieces;  // (offset, bytes)
      for (uint64_t off = 0; off < n;) {
        uint64_t s = align;
        while (s > n - off || off % s)
          s /= 2;
        pieces.push_back({off, s});
        off += s;
      }
      SmallVector<Value *, 16> values;
      Value *D8 = i8p(B, Dst);
      Value *Byte = is_set ? B.CreateZExtOrTrunc(Val, Type::getInt8Ty(C)) : nullptr;
      for (auto [off, s] : pieces) {
        Type *T = IntegerType::get(C, static_cast<unsigned>(s * 8));
        if (is_set) {
          Value *Wide = B.CreateZExt(Byte, T);
          Value *Splat = B.CreateMul(Wide, ConstantInt::get(T, APInt::getSplat(static_cast<unsigned>(s * 8), APInt(8, 1))));
          values.push_back(Splat);
          continue;
        }
        Value *P = B.CreatePointerCast(B.CreateConstGEP1_64(Type::getInt8Ty(C), i8p(B, Src), off), T->getPointerTo());
        values.push_back(B.CreateAlignedLoad(T, P, Align(std::min(align, s)), is_volatile));
      }
      for (size_t k = 0; k < pieces.size(); ++k) {
        auto [off, s] = pieces[k];
        Type *T = IntegerType::get(C, static_cast<unsigned>(s * 8));
        Value *P = B.CreatePointerCast(B.CreateConstGEP1_64(Type::getInt8Ty(C), D8, off), T->getPointerTo());
        B.CreateAlignedStore(values[k], P, Align(std::min(align, s)), is_volatile);
      }
    } else if (is_set) {
      B.CreateCall(helper(gpulab::emu::pass_abi::device_memset, {I8P, I32, I64, I64}),
                   {i8p(B, Dst), B.CreateZExtOrTrunc(Val, I32), B.CreateZExtOrTrunc(Len, I64), ConstantInt::get(I64, align)});
    } else {
      B.CreateCall(helper(gpulab::emu::pass_abi::device_memcpy, {I8P, I8P, I64, I64}),
                   {i8p(B, Dst), i8p(B, Src), B.CreateZExtOrTrunc(Len, I64), ConstantInt::get(I64, align)});
    }
  }

  /// A call of a library memcpy / memmove / mempcpy / memset (and their _chk forms): the same as
  /// the intrinsic, then the value the library function returns.
  void rewrite_memory_call(CallBase *CB, StringRef name, bool is_set) {
    Value *Dst = CB->getArgOperand(0), *Len = CB->getArgOperand(2);
    rewrite_memory(CB, is_set, Dst, is_set ? nullptr : CB->getArgOperand(1), Len, is_set ? CB->getArgOperand(1) : nullptr,
                   1, false);
    IRBuilder<> B(CB);
    Value *Ret = Dst;
    if (name.contains("mempcpy"))
      Ret = B.CreateGEP(Type::getInt8Ty(C), i8p(B, Dst), B.CreateZExtOrTrunc(Len, I64));
    if (!CB->getType()->isVoidTy())
      CB->replaceAllUsesWith(B.CreatePointerCast(Ret, CB->getType()));
  }

  bool allowed_intrinsic(Intrinsic::ID id) {
    switch (id) {
      case Intrinsic::lifetime_start: case Intrinsic::lifetime_end: case Intrinsic::assume:
      case Intrinsic::dbg_declare: case Intrinsic::dbg_value: case Intrinsic::dbg_label: case Intrinsic::dbg_addr:
      case Intrinsic::stacksave: case Intrinsic::stackrestore: case Intrinsic::vastart: case Intrinsic::vaend:
      case Intrinsic::vacopy: case Intrinsic::invariant_start: case Intrinsic::invariant_end:
      case Intrinsic::launder_invariant_group: case Intrinsic::strip_invariant_group: case Intrinsic::prefetch:
      case Intrinsic::experimental_noalias_scope_decl: case Intrinsic::trap: case Intrinsic::debugtrap:
      case Intrinsic::donothing: case Intrinsic::sideeffect: case Intrinsic::var_annotation:
      case Intrinsic::ptr_annotation: case Intrinsic::annotation: case Intrinsic::codeview_annotation:
      case Intrinsic::eh_typeid_for: case Intrinsic::objectsize: case Intrinsic::is_constant:
      case Intrinsic::expect: case Intrinsic::expect_with_probability: case Intrinsic::pseudoprobe:
      case Intrinsic::instrprof_increment: case Intrinsic::stackprotector: case Intrinsic::stackguard:
        return true;
      default:
        return false;
    }
  }

  /// memcpy / memmove / memset intrinsics (the compiler's aggregate copies too).
  void memory_intrinsic(Function &F, CallBase *CB, AnyMemIntrinsic *MI) {
    if (isa<AnyMemTransferInst>(MI) && !isa<MemTransferInst>(MI)) {  // element-wise atomic copies
      if (instrumentation)
        failed = true, refuse(F, CB, "copies memory with an element-wise atomic intrinsic, which the emulator cannot trace");
      return;
    }
    if (!device_calls)
      return;
    auto *M2 = cast<MemIntrinsic>(MI);
    uint64_t align = M2->getDestAlign().valueOrOne().value();
    if (auto *T = dyn_cast<MemTransferInst>(M2))
      align = std::min<uint64_t>(align, T->getSourceAlign().valueOrOne().value());
    const bool is_set = isa<MemSetInst>(M2);
    rewrite_memory(CB, is_set, M2->getRawDest(), is_set ? nullptr : cast<MemTransferInst>(M2)->getRawSource(),
                   M2->getLength(), is_set ? cast<MemSetInst>(M2)->getValue() : nullptr, align, M2->isVolatile());
    CB->eraseFromParent();
  }

  /// A call of a function declared, not defined, in the file: a library's (or another file's).
  void library_call(CallBase *CB, Function *Callee) {
    const StringRef name = Callee->getName();
    bool is_set = false;
    if (memory_function(name, is_set) && CB->arg_size() >= 3 && isa<CallInst>(CB)) {
      rewrite_memory_call(CB, name, is_set);
      CB->eraseFromParent();
      return;
    }
    if (math_function(name)) {  // sincos, frexp, modf, remquo...: what they store through pointers
      for (Value *A : CB->args())
        if (auto *PT = dyn_cast<PointerType>(A->getType())) {
          Type *E = PT->getPointerElementType();
          trace_access(CB, A, E->isSized() ? DL.getTypeStoreSize(E).getFixedSize() : 1, true);
        }
      return;
    }
    if (device_function(name))
      return;
    IRBuilder<> B(CB);
    Constant *Name = B.CreateGlobalStringPtr(name, "gpulab.host_call.name");
    B.CreateCall(helper(gpulab::emu::pass_abi::device_host_call, {I8P}), {Name});
  }

  void call(Function &F, CallBase *CB) {
    if (CB->isInlineAsm()) {
      if (instrumentation)
        failed = true, refuse(F, CB, "contains inline assembly, which the emulator cannot trace");
      return;
    }
    Function *Callee = CB->getCalledFunction();
    if (!Callee) {
      if (device_calls) {
        IRBuilder<> B(CB);
        B.CreateCall(helper(gpulab::emu::pass_abi::device_indirect_call, {I8P}), {i8p(B, CB->getCalledOperand())});
      }
      return;
    }
    if (auto *MI = dyn_cast<AnyMemIntrinsic>(CB))
      return memory_intrinsic(F, CB, MI);
    if (Callee->isIntrinsic()) {
      if (instrumentation && !CB->doesNotAccessMemory() && !Callee->doesNotAccessMemory() &&
          !allowed_intrinsic(Callee->getIntrinsicID()))
        failed = true, refuse(F, CB, "uses " + Callee->getName() + ", which touches memory in a way the emulator cannot trace");
      return;
    }
    if (Callee->isDeclaration() && device_calls)
      library_call(CB, Callee);
  }

  void instruction(Function &F, Instruction *I) {
    if (auto *CB = dyn_cast<CallBase>(I))
      return call(F, CB);
    if (!instrumentation)
      return;
    if (auto *LI = dyn_cast<LoadInst>(I)) {
      const uint64_t bits = DL.getTypeStoreSizeInBits(LI->getType()).getFixedSize();
      if (!traced_size(bits))
        trace_access(LI, LI->getPointerOperand(), bits / 8, false);
    } else if (auto *SI = dyn_cast<StoreInst>(I)) {
      const uint64_t bits = DL.getTypeStoreSizeInBits(SI->getValueOperand()->getType()).getFixedSize();
      if (!traced_size(bits))
        trace_access(SI, SI->getPointerOperand(), bits / 8, true);
    } else if (isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I)) {
      Value *Ptr = isa<AtomicRMWInst>(I) ? cast<AtomicRMWInst>(I)->getPointerOperand()
                                         : cast<AtomicCmpXchgInst>(I)->getPointerOperand();
      Type *T = isa<AtomicRMWInst>(I) ? cast<AtomicRMWInst>(I)->getValOperand()->getType()
                                      : cast<AtomicCmpXchgInst>(I)->getNewValOperand()->getType();
      IRBuilder<> B(I);
      B.CreateCall(helper(gpulab::emu::pass_abi::device_atomic, {I8P, I64}),
                   {i8p(B, Ptr), ConstantInt::get(I64, DL.getTypeStoreSize(T).getFixedSize())});
    }
  }

  /// Whether F may be compiled: nothing about it makes SanitizerCoverage skip it.
  bool check_function(Function &F) {
    const StringRef name = F.getName();
    if (F.hasFnAttribute(Attribute::NoSanitizeCoverage) || F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation)) {
      refuse(F, nullptr,
             "has an attribute that switches the emulator's access tracing off (no_sanitize(\"coverage\"), "
             "disable_sanitizer_instrumentation, directly or through #pragma clang attribute): its loads and stores "
             "would not be seen");
      return false;
    }
    if (F.hasFnAttribute(Attribute::Naked)) {
      refuse(F, nullptr, "is naked (a body of assembly only), which the emulator cannot trace");
      return false;
    }
    if (name.startswith("__sanitizer_") || name.contains(".module_ctor")) {
      refuse(F, nullptr, "has a name the access tracing skips");
      return false;
    }
    return true;
  }

  /// An entry block that ends in `unreachable` (stores, then a throw) makes SanitizerCoverage skip
  /// the function: the entry's allocas stay, the rest moves to a block of its own.
  void split_unreachable_entry(Function &F) {
    BasicBlock &Entry = F.getEntryBlock();
    if (!isa<UnreachableInst>(Entry.getTerminator()))
      return;
    BasicBlock::iterator It = Entry.getFirstInsertionPt();
    while (isa<AllocaInst>(*It))
      ++It;
    SplitBlock(&Entry, &*It);
  }

  void run_on(Function &F) {
    if (instrumentation && !check_function(F)) {
      failed = true;
      return;
    }
    if (instrumentation)
      split_unreachable_entry(F);
    SmallVector<Instruction *, 64> work;
    for (Instruction &I : instructions(F))
      if (isa<CallBase>(I) || isa<LoadInst>(I) || isa<StoreInst>(I) || isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I))
        work.push_back(&I);
    for (Instruction *I : work)
      instruction(F, I);
  }

  /// A constructor that gives the emulator the address of every function of the file: the targets
  /// kernel code may call through a pointer.
  void register_functions(ArrayRef<Function *> defined) {
    SmallVector<Constant *, 64> addresses;
    for (Function *F : defined)
      if (!F->hasAvailableExternallyLinkage())
        addresses.push_back(ConstantExpr::getPointerCast(F, I8P));
    if (addresses.empty())
      return;
    ArrayType *AT = ArrayType::get(I8P, addresses.size());
    auto *Table = new GlobalVariable(M, AT, true, GlobalValue::PrivateLinkage, ConstantArray::get(AT, addresses),
                                     "gpulab.device.functions");
    Function *Ctor = Function::Create(FunctionType::get(Void, false), GlobalValue::InternalLinkage,
                                      "gpulab.device.register", &M);
    Ctor->addFnAttr(Attribute::NoSanitizeCoverage);  // (ours: only reads its table)
    IRBuilder<> B(BasicBlock::Create(C, "", Ctor));
    B.CreateCall(helper(gpulab::emu::pass_abi::device_functions, {I8P->getPointerTo(), I64}),
                 {B.CreateConstGEP2_64(AT, Table, 0, 0), ConstantInt::get(I64, addresses.size())});
    B.CreateRetVoid();
    appendToGlobalCtors(M, Ctor, 0);
  }
};

struct GpulabDevicePass : PassInfoMixin<GpulabDevicePass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    // (Once: a file that two targets compile as a kernel source gets the plugin twice.)
    if (!M.getNamedGlobal(gpulab::emu::pass_abi::traced_file) || M.getNamedMetadata("gpulab.device_pass"))
      return PreservedAnalyses::all();
    M.getOrInsertNamedMetadata("gpulab.device_pass");
    Rewriter R{M, rule_on("instrumentation"), rule_on("device-calls")};
    SmallVector<Function *, 64> defined;
    for (Function &F : M) {
      if (F.isDeclaration() || F.hasAvailableExternallyLinkage())
        continue;
      // The twin pass's copy of a kernel kept for its block loop (erased before SanitizerCoverage).
      if (F.getName().endswith(".gpulab_early") && M.getFunction(F.getName().drop_back(strlen(".gpulab_early"))))
        continue;
      defined.push_back(&F);
    }
    for (Function *F : defined)
      R.run_on(*F);
    if (R.device_calls && !R.failed)
      R.register_functions(defined);
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

void registerCallbacks(PassBuilder &PB) {
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(GpulabDevicePass()); });
  PB.registerPipelineParsingCallback([](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
    if (Name != "gpulab-device-code")
      return false;
    MPM.addPass(GpulabDevicePass());
    return true;
  });
}

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "GpulabDeviceCode", "1", registerCallbacks};
}
