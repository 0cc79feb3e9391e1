//===- count_pass.cpp - gpulab per-thread IR instruction counter ---------===//
//
// LLVM 14 new-pass-manager plugin ("GpulabCount", pipeline name
// "gpulab-count").  For every executed basic block it adds the block's static
// per-class instruction counts to a per-thread array of uint64 counters:
//
//   extern "C" thread_local uint64_t *gpulab_emu_icount;   // (initial-exec)
//
// The runtime (not this file) defines that variable and keeps it non-null at
// all times (pointing at a dummy array outside kernels).
//
// Counter slots (uint64 each, NUM = 10):
//   0 FP32     float arithmetic: fadd fsub fmul fdiv frem fneg, plus
//              llvm.fma.f32 / llvm.fmuladd.f32 (and calls to fmaf), 1 each.
//   1 FMA32    of those, the llvm.fma.f32 / llvm.fmuladd.f32 / fmaf calls
//              (also counted in slot 0).
//   2 FP64     the same arithmetic on double (llvm.fma.f64 / fmuladd.f64 /
//              fma count 1 each here; there is no fma64 slot).
//   3 INT      add sub mul udiv sdiv urem srem shl lshr ashr and or xor,
//              icmp, select, zext sext trunc, llvm.{s,u}{min,max}, llvm.abs,
//              and getelementptr with at least one non-constant index.
//   4 LOAD     load instructions (1 each, whatever the width).
//   5 STORE    store instructions (1 each).
//   6 BRANCH   conditional br and switch.
//   7 CONVERT  sitofp uitofp fptosi fptoui fpext fptrunc.
//   8 SPECIAL  math intrinsics other than fma/fmuladd (llvm.sqrt, exp, exp2,
//              log, log2, log10, sin, cos, pow, powi, fabs, minnum, maxnum,
//              minimum, maximum, copysign, floor, ceil, trunc, round, rint,
//              nearbyint) and calls to libm functions by name (sqrtf, expf,
//              ..., see isLibmName).
//   9 TOTAL    everything counted in slots 0 and 2..8, plus fcmp (which is
//              counted only here).
//
// Vector instructions count one per demanded lane in the arithmetic classes
// (FP32, FP64, INT, CONVERT, SPECIAL, and fcmp in TOTAL): the lanes some user
// needs (demandedLanes below), since the emulator's float4 is a 4-lane vector
// and the optimiser widens scalar code on it; loads and stores count 1
// whatever the width.  TOTAL adds the same weight as the class slot.
// Never counted: phi, unconditional br, ret, unreachable, bitcast,
// ptrtoint/inttoptr, alloca, extractvalue/insertvalue, all-constant GEPs,
// debug/lifetime/assume and other non-math intrinsics, ordinary calls
// (including __sanitizer_* hooks), atomicrmw/cmpxchg/fence, vector
// element/shuffle operations, and the instructions this pass inserts.
//
// Instructions that carry !nosanitize metadata (the parts of clang's UBSan
// checks so marked, sanitizer inline counters) are not counted either.
//
// Instrumentation: counts are computed per block on the original code; then
// at the block's first insertion point the pass inserts one load of
// gpulab_emu_icount and, for each nonzero slot c, gep/load/add/store on
// slot c.  The inserted loads and stores are plain and carry !nosanitize.
//
// Skipped functions: declarations, naked functions, and names starting with
// __sanitizer, gpulab_emu_, _ZN6gpulab3emu, __cxx_global, _GLOBAL__sub_I,
// __tls_init, _ZTW, _ZTH.
//
// Pass ordering (clang 14, checked with -Xclang -fdebug-pass-manager):
//  * OptimizerLastEP callbacks run at every -O level, -O0 included
//    (buildO0DefaultPipeline calls them), exactly once per compilation.
//  * clang registers plugin callbacks before its own sanitizer callback
//    (addSanitizers, also OptimizerLastEP), so a pass added from the plugin's
//    OptimizerLastEP callback runs BEFORE ModuleSanitizerCoveragePass.
//  * LLVM 14's SanitizerCoverage trace-loads/trace-stores ignores
//    !nosanitize and would hook every counter load/store.
// Hence two passes:
//  1. GpulabCountAnnotatePass, added from the plugin's OptimizerLastEP
//     callback (before the sanitizers): computes the per-block counts on the
//     clean IR and attaches them to each block's terminator as
//     !gpulab.icount metadata.
//  2. GpulabCountPass, added from an OptimizerLastEP callback that the plugin
//     registers lazily from a PipelineStartEP callback, i.e. after clang's
//     sanitizer callback, so it runs after SanitizerCoverage / ASan / ...:
//     inserts the counter updates from the recorded counts (blocks created
//     by the sanitizers carry no counts and get no update) and removes the
//     metadata.  The sanitizers never see the counter code.
// If no PipelineStartEP callback ran before the OptimizerLastEP callbacks,
// GpulabCountPass is added directly instead (it then counts by itself).
// "opt -passes=gpulab-count" runs GpulabCountPass alone, which counts by
// itself.  Named module metadata (gpulab.count.annotated / .done) keeps a
// module from being counted or instrumented twice.
//
// Setting GPULAB_COUNT_PASS_OFF=1 in the compiler's environment disables
// both passes.
//
//===----------------------------------------------------------------------===//

#define GPULAB_PASS_ABI_NAMES_ONLY
#include "gpulab/emu/pass_abi.hpp"  // the runtime functions this pass calls
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/Compiler.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

using namespace llvm;

namespace {

enum CounterSlot : unsigned {
  kFP32 = 0,
  kFMA32 = 1,
  kFP64 = 2,
  kINT = 3,
  kLOAD = 4,
  kSTORE = 5,
  kBRANCH = 6,
  kCONVERT = 7,
  kSPECIAL = 8,
  kTOTAL = 9,
  kNUM = 10
};

using Counts = std::array<uint64_t, kNUM>;

constexpr const char *kCounterName = gpulab::emu::pass_abi::icount;
constexpr const char *kDoneMarker = "gpulab.count.done";

bool isSkippedFunction(const Function &F) {
  if (F.isDeclaration() || F.hasFnAttribute(Attribute::Naked))
    return true;
  StringRef N = F.getName();
  static const char *const Prefixes[] = {
      "__sanitizer", gpulab::emu::pass_abi::prefix,    "_ZN6gpulab3emu", "__cxx_global",
      "_GLOBAL__sub_I", "__tls_init", "_ZTW",           "_ZTH"};
  for (const char *P : Prefixes)
    if (N.startswith(P))
      return true;
  return false;
}

// Number of lanes of a (possibly vector) value type.
uint64_t lanes(Type *T) {
  if (auto *VT = dyn_cast<FixedVectorType>(T))
    return VT->getNumElements();
  if (auto *VT = dyn_cast<ScalableVectorType>(T))
    return VT->getMinNumElements();
  return 1;
}

// Floating-point class of a type: kFP32, kFP64 or kNUM (other / not fp).
unsigned fpSlot(Type *T) {
  Type *S = T->getScalarType();
  if (S->isFloatTy())
    return kFP32;
  if (S->isDoubleTy())
    return kFP64;
  return kNUM;
}

// libm-like functions counted as SPECIAL when called by name.
bool isLibmName(StringRef N) {
  // Strip a float / long double suffix to match both variants.
  static const char *const Names[] = {
      "sqrt",  "cbrt",  "rsqrt", "exp",    "exp2",   "exp10", "expm1",
      "log",   "log2",  "log10", "log1p",  "pow",    "sin",   "cos",
      "tan",   "asin",  "acos",  "atan",   "atan2",  "sinh",  "cosh",
      "tanh",  "asinh", "acosh", "atanh",  "fabs",   "fmin",  "fmax",
      "floor", "ceil",  "trunc", "round",  "rint",   "nearbyint",
      "fmod",  "remainder", "hypot", "erf", "erfc", "tgamma", "lgamma",
      "sincos", "sinpi", "cospi", "copysign", "ldexp", "frexp", "modf",
      "__expf", "__logf", "__sinf", "__cosf", "__powf", "__exp10f"};
  for (const char *Base : Names) {
    size_t L = std::strlen(Base);
    if (!N.startswith(Base))
      continue;
    StringRef Rest = N.drop_front(L);
    if (Rest.empty() || Rest == "f" || Rest == "l")
      return true;
  }
  return false;
}

bool isSpecialIntrinsic(Intrinsic::ID ID) {
  switch (ID) {
  case Intrinsic::sqrt:
  case Intrinsic::exp:
  case Intrinsic::exp2:
  case Intrinsic::log:
  case Intrinsic::log2:
  case Intrinsic::log10:
  case Intrinsic::sin:
  case Intrinsic::cos:
  case Intrinsic::pow:
  case Intrinsic::powi:
  case Intrinsic::fabs:
  case Intrinsic::minnum:
  case Intrinsic::maxnum:
  case Intrinsic::minimum:
  case Intrinsic::maximum:
  case Intrinsic::copysign:
  case Intrinsic::floor:
  case Intrinsic::ceil:
  case Intrinsic::trunc:
  case Intrinsic::round:
  case Intrinsic::roundeven:
  case Intrinsic::rint:
  case Intrinsic::nearbyint:
    return true;
  default:
    return false;
  }
}

void addFma(Counts &C, Type *Ty, uint64_t W) {
  unsigned S = fpSlot(Ty);
  if (S == kFP32) {
    C[kFP32] += W;
    C[kFMA32] += W;
    C[kTOTAL] += W;
  } else if (S == kFP64) {
    C[kFP64] += W;
    C[kTOTAL] += W;
  } else {
    C[kTOTAL] += W;
  }
}

void countCall(Counts &C, const CallBase &CB, uint64_t Lanes) {
  Type *RetTy = CB.getType();
  if (const Function *Callee = CB.getCalledFunction()) {
    Intrinsic::ID ID = Callee->getIntrinsicID();
    if (ID != Intrinsic::not_intrinsic) {
      switch (ID) {
      case Intrinsic::fma:
      case Intrinsic::fmuladd:
        addFma(C, RetTy, Lanes);
        return;
      case Intrinsic::smin:
      case Intrinsic::smax:
      case Intrinsic::umin:
      case Intrinsic::umax:
      case Intrinsic::abs:
        C[kINT] += Lanes;
        C[kTOTAL] += Lanes;
        return;
      default:
        if (isSpecialIntrinsic(ID)) {
          C[kSPECIAL] += Lanes;
          C[kTOTAL] += Lanes;
        }
        return; // debug, lifetime, assume, memcpy, ...: not counted
      }
    }
    StringRef N = Callee->getName();
    if (N.startswith("__sanitizer"))
      return;
    if (N == "fmaf" || N == "fma") {
      addFma(C, RetTy, 1);
      return;
    }
    if (isLibmName(N)) {
      C[kSPECIAL] += 1;
      C[kTOTAL] += 1;
    }
  }
  // Indirect and ordinary calls are not counted.
}

// Lanes of each vector-typed instruction whose values some user needs, as a bit
// mask (bit i: lane i). The emulator's float4 is a 4-lane vector, and the
// optimiser turns `q.x - p.x` into a 4-lane subtraction of which one lane is
// used: a GPU thread executes one subtraction there, so an arithmetic vector
// instruction counts its demanded lanes only. A user that reads a vector as
// a whole (a store, a call, a bitcast, ...) demands every lane; an
// extractelement with a constant index demands that lane; an elementwise user
// (arithmetic, compare, conversion, select, phi, elementwise intrinsic)
// passes on its own demanded lanes; a shufflevector maps them back through its
// mask; an insertelement passes on all but the lane it replaces.
using LaneMask = uint64_t;
using DemandedLanes = DenseMap<const Instruction *, LaneMask>;

LaneMask allLanes(Type *T) {
  const uint64_t N = lanes(T);
  return N >= 64 ? ~LaneMask(0) : (LaneMask(1) << N) - 1;
}

bool isElementwiseIntrinsic(Intrinsic::ID ID) {
  return ID == Intrinsic::fma || ID == Intrinsic::fmuladd || ID == Intrinsic::smin ||
         ID == Intrinsic::smax || ID == Intrinsic::umin || ID == Intrinsic::umax ||
         ID == Intrinsic::abs || isSpecialIntrinsic(ID);
}

// The lanes of V (an operand of U) that U needs, given U's own demanded lanes.
LaneMask lanesUsedBy(const Value *V, const User *U, const DemandedLanes &D) {
  Type *VT = V->getType();
  const auto *UI = dyn_cast<Instruction>(U);
  if (!UI)
    return allLanes(VT);
  auto demandedOf = [&](const Instruction *I) {
    auto It = D.find(I);
    return It == D.end() ? allLanes(I->getType()) : It->second;
  };
  if (const auto *E = dyn_cast<ExtractElementInst>(UI)) {
    if (E->getVectorOperand() != V)
      return allLanes(VT);
    if (const auto *Idx = dyn_cast<ConstantInt>(E->getIndexOperand()))
      return Idx->getZExtValue() < 64 ? LaneMask(1) << Idx->getZExtValue() : allLanes(VT);
    return allLanes(VT);
  }
  if (const auto *Ins = dyn_cast<InsertElementInst>(UI)) {
    if (Ins->getOperand(0) != V)
      return allLanes(VT);
    LaneMask M = demandedOf(UI);
    if (const auto *Idx = dyn_cast<ConstantInt>(Ins->getOperand(2)))
      if (Idx->getZExtValue() < 64)
        M &= ~(LaneMask(1) << Idx->getZExtValue());
    return M;
  }
  if (const auto *Sh = dyn_cast<ShuffleVectorInst>(UI)) {
    const LaneMask Out = demandedOf(UI);
    const int N = static_cast<int>(lanes(Sh->getOperand(0)->getType()));
    LaneMask M = 0;
    ArrayRef<int> Mask = Sh->getShuffleMask();
    for (size_t J = 0; J < Mask.size() && J < 64; ++J) {
      if (!(Out >> J & 1) || Mask[J] < 0)
        continue;
      const bool FromFirst = Mask[J] < N;
      const int Lane = FromFirst ? Mask[J] : Mask[J] - N;
      if ((FromFirst ? Sh->getOperand(0) : Sh->getOperand(1)) == V && Lane < 64)
        M |= LaneMask(1) << Lane;
    }
    return M;
  }
  const bool SameShape = lanes(UI->getType()) == lanes(VT) ||
                         (isa<CmpInst>(UI) && lanes(UI->getType()) == lanes(VT));
  if (SameShape && (isa<BinaryOperator>(UI) || isa<UnaryOperator>(UI) || isa<CmpInst>(UI) ||
                    isa<PHINode>(UI) || (isa<CastInst>(UI) && !isa<BitCastInst>(UI)) ||
                    (isa<SelectInst>(UI) && UI->getOperand(0) != V))) {
    return demandedOf(UI);
  }
  if (const auto *CB = dyn_cast<CallBase>(UI))
    if (const Function *Callee = CB->getCalledFunction())
      if (SameShape && isElementwiseIntrinsic(Callee->getIntrinsicID()))
        return demandedOf(UI);
  return allLanes(VT);
}

DemandedLanes demandedLanes(const Function &F) {
  DemandedLanes D;
  SmallVector<const Instruction *, 64> Vectors;
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB)
      if (I.getType()->isVectorTy()) {
        Vectors.push_back(&I);
        D[&I] = 0;
      }
  // Grows from nothing to the fixpoint (phis may form cycles); a mask only gains bits.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (auto It = Vectors.rbegin(); It != Vectors.rend(); ++It) {
      const Instruction *I = *It;
      LaneMask M = 0;
      for (const User *U : I->users())
        M |= lanesUsedBy(I, U, D);
      M &= allLanes(I->getType());
      if (M != D[I]) {
        D[I] = M;
        Changed = true;
      }
    }
  }
  return D;
}

// Lanes an instruction executes: its demanded lanes if it is a vector.
uint64_t executedLanes(const Instruction &I, const DemandedLanes *D) {
  Type *T = I.getType();
  if (!T->isVectorTy() || !D)
    return lanes(T);
  auto It = D->find(&I);
  return It == D->end() ? lanes(T) : static_cast<uint64_t>(__builtin_popcountll(It->second));
}

void countInstruction(Counts &C, const Instruction &I, unsigned NoSanKind,
                      const DemandedLanes *D) {
  if (I.getMetadata(NoSanKind))
    return; // instrumentation (UBSan checks, sanitizer counters, ...)
  auto add = [&C](unsigned Slot, uint64_t N) {
    C[Slot] += N;
    C[kTOTAL] += N;
  };
  switch (I.getOpcode()) {
  case Instruction::FAdd:
  case Instruction::FSub:
  case Instruction::FMul:
  case Instruction::FDiv:
  case Instruction::FRem:
  case Instruction::FNeg: {
    unsigned S = fpSlot(I.getType());
    if (S != kNUM)
      add(S, executedLanes(I, D));
    else
      C[kTOTAL] += executedLanes(I, D);
    return;
  }
  case Instruction::Add:
  case Instruction::Sub:
  case Instruction::Mul:
  case Instruction::UDiv:
  case Instruction::SDiv:
  case Instruction::URem:
  case Instruction::SRem:
  case Instruction::Shl:
  case Instruction::LShr:
  case Instruction::AShr:
  case Instruction::And:
  case Instruction::Or:
  case Instruction::Xor:
  case Instruction::Select:
  case Instruction::ZExt:
  case Instruction::SExt:
  case Instruction::Trunc:
  case Instruction::ICmp:
    add(kINT, executedLanes(I, D));
    return;
  case Instruction::FCmp:
    C[kTOTAL] += executedLanes(I, D);
    return;
  case Instruction::GetElementPtr: {
    const auto &G = cast<GetElementPtrInst>(I);
    if (!G.hasAllConstantIndices())
      add(kINT, 1);
    return;
  }
  case Instruction::Load:
    add(kLOAD, 1);
    return;
  case Instruction::Store:
    add(kSTORE, 1);
    return;
  case Instruction::Br:
    if (cast<BranchInst>(I).isConditional())
      add(kBRANCH, 1);
    return;
  case Instruction::Switch:
    add(kBRANCH, 1);
    return;
  case Instruction::SIToFP:
  case Instruction::UIToFP:
  case Instruction::FPToSI:
  case Instruction::FPToUI:
  case Instruction::FPExt:
  case Instruction::FPTrunc:
    add(kCONVERT, executedLanes(I, D));
    return;
  case Instruction::Call:
  case Instruction::Invoke:
    countCall(C, cast<CallBase>(I), executedLanes(I, D));
    return;
  default:
    return; // phi, ret, unreachable, casts, alloca, aggregates, ...
  }
}

bool countPassDisabled() {
  const char *E = std::getenv("GPULAB_COUNT_PASS_OFF");
  return E && std::strcmp(E, "1") == 0;
}

constexpr const char *kAnnotatedMarker = "gpulab.count.annotated";
constexpr const char *kCountsMDKind = "gpulab.icount";

Counts countBlock(const BasicBlock &BB, unsigned NoSanKind, const DemandedLanes *D) {
  Counts C{};
  for (const Instruction &I : BB)
    countInstruction(C, I, NoSanKind, D);
  return C;
}

bool anyNonZero(const Counts &C) {
  for (uint64_t V : C)
    if (V)
      return true;
  return false;
}

// Phase 1: record the static per-block counts of the clean IR on each
// block's terminator (runs before the sanitizer passes).
struct GpulabCountAnnotatePass : PassInfoMixin<GpulabCountAnnotatePass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    if (countPassDisabled() || M.getNamedMetadata(kAnnotatedMarker) ||
        M.getNamedMetadata(kDoneMarker))
      return PreservedAnalyses::all();
    LLVMContext &Ctx = M.getContext();
    unsigned NoSanKind = Ctx.getMDKindID("nosanitize");
    unsigned CountsKind = Ctx.getMDKindID(kCountsMDKind);
    Type *I64 = Type::getInt64Ty(Ctx);
    for (Function &F : M) {
      if (isSkippedFunction(F))
        continue;
      const DemandedLanes D = demandedLanes(F);
      for (BasicBlock &BB : F) {
        Instruction *T = BB.getTerminator();
        if (!T)
          continue;
        Counts C = countBlock(BB, NoSanKind, &D);
        if (!anyNonZero(C))
          continue;
        SmallVector<Metadata *, kNUM> Ops;
        for (uint64_t V : C)
          Ops.push_back(ConstantAsMetadata::get(ConstantInt::get(I64, V)));
        T->setMetadata(CountsKind, MDTuple::get(Ctx, Ops));
      }
    }
    M.getOrInsertNamedMetadata(kAnnotatedMarker);
    // Only metadata changed.
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// Phase 2 (or the whole job when phase 1 did not run): insert the counter
// updates.
struct GpulabCountPass : PassInfoMixin<GpulabCountPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    if (countPassDisabled() || M.getNamedMetadata(kDoneMarker))
      return PreservedAnalyses::all();

    LLVMContext &Ctx = M.getContext();
    Type *I64 = Type::getInt64Ty(Ctx);
    Type *I64Ptr = PointerType::getUnqual(I64);
    unsigned NoSanKind = Ctx.getMDKindID("nosanitize");
    unsigned CountsKind = Ctx.getMDKindID(kCountsMDKind);
    const bool Annotated = M.getNamedMetadata(kAnnotatedMarker) != nullptr;

    // Blocks to instrument and their counts, all taken before any
    // instruction is inserted.
    std::vector<std::pair<BasicBlock *, Counts>> Work;
    for (Function &F : M) {
      if (F.isDeclaration())
        continue;
      const bool Skipped = isSkippedFunction(F);
      const DemandedLanes D = Annotated || Skipped ? DemandedLanes() : demandedLanes(F);
      for (BasicBlock &BB : F) {
        Counts C{};
        Instruction *T = BB.getTerminator();
        if (Annotated) {
          // Counts recorded by phase 1; blocks added since then have none.
          if (!T)
            continue;
          MDNode *N = T->getMetadata(CountsKind);
          if (!N)
            continue;
          T->setMetadata(CountsKind, nullptr);
          if (Skipped || N->getNumOperands() != kNUM)
            continue;
          for (unsigned S = 0; S < kNUM; ++S)
            if (auto *CI =
                    mdconst::dyn_extract<ConstantInt>(N->getOperand(S)))
              C[S] = CI->getZExtValue();
        } else {
          if (Skipped)
            break;
          C = countBlock(BB, NoSanKind, &D);
        }
        if (anyNonZero(C))
          Work.emplace_back(&BB, C);
      }
    }

    M.getOrInsertNamedMetadata(kDoneMarker);
    if (Work.empty())
      return PreservedAnalyses::all();

    Constant *CounterGV = M.getOrInsertGlobal(kCounterName, I64Ptr, [&] {
      return new GlobalVariable(M, I64Ptr, /*isConstant=*/false,
                                GlobalValue::ExternalLinkage,
                                /*Initializer=*/nullptr, kCounterName,
                                /*InsertBefore=*/nullptr,
                                GlobalValue::InitialExecTLSModel);
    });
    MDNode *NoSan = MDNode::get(Ctx, None);

    bool Changed = false;
    for (auto &[BB, C] : Work) {
      BasicBlock::iterator IP = BB->getFirstInsertionPt();
      if (IP == BB->end())
        continue; // e.g. a block made only of a catchswitch
      IRBuilder<> B(BB, IP);
      B.SetCurrentDebugLocation(DebugLoc());
      LoadInst *Base = B.CreateLoad(I64Ptr, CounterGV, "gpulab.icount");
      Base->setMetadata(NoSanKind, NoSan);
      for (unsigned S = 0; S < kNUM; ++S) {
        if (C[S] == 0)
          continue;
        Value *Slot = B.CreateConstInBoundsGEP1_64(I64, Base, S);
        LoadInst *Old = B.CreateLoad(I64, Slot);
        Old->setMetadata(NoSanKind, NoSan);
        Value *New = B.CreateAdd(Old, ConstantInt::get(I64, C[S]));
        StoreInst *St = B.CreateStore(New, Slot);
        St->setMetadata(NoSanKind, NoSan);
      }
      Changed = true;
    }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }

  // Run even on optnone functions / at -O0.
  static bool isRequired() { return true; }
};

// Per-PassBuilder registration state.
struct PluginState {
  PassBuilder *PB = nullptr;
  bool LateRegistered = false;
};

void registerCallbacks(PassBuilder &PB) {
  auto St = std::make_shared<PluginState>();
  St->PB = &PB;
  // Runs when a default pipeline is built, i.e. after clang has registered
  // its sanitizer OptimizerLastEP callback: registering here puts the
  // insertion pass after the sanitizer passes.
  PB.registerPipelineStartEPCallback(
      [St](ModulePassManager &, OptimizationLevel) {
        if (St->LateRegistered)
          return;
        St->LateRegistered = true;
        St->PB->registerOptimizerLastEPCallback(
            [](ModulePassManager &MPM, OptimizationLevel) {
              MPM.addPass(GpulabCountPass());
            });
      });
  // Registered first, so it runs before the sanitizer passes.
  PB.registerOptimizerLastEPCallback(
      [St](ModulePassManager &MPM, OptimizationLevel) {
        if (St->LateRegistered)
          MPM.addPass(GpulabCountAnnotatePass());
        else
          MPM.addPass(GpulabCountPass()); // no late slot: do it all here
      });
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM,
         ArrayRef<PassBuilder::PipelineElement>) {
        if (Name == "gpulab-count") {
          MPM.addPass(GpulabCountPass());
          return true;
        }
        return false;
      });
}

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "GpulabCount", "1", registerCallbacks};
}
