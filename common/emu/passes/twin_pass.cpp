//===- twin_pass.cpp - gpulab: untraced twins, and block loops ------------===//
//
// LLVM 14 new-pass-manager plugin ("GpulabTwins") with two passes, both run
// at the end of the optimisation pipeline, block loops first:
//   * "gpulab-block-loops", for any kernel file of the emu back-end, traced
//     or not: a block loop of each kernel without warp collectives or calls
//     (see "block loops" below), phase by phase where it has __syncthreads()
//     (see "region loops"), and for a barrier-free kernel whose threads each
//     run a loop, a jam copy that runs 16 threads' loops together (8 or 4 for
//     a larger inner loop; see "thread jam"; its source is a copy kept at the
//     vectoriser's start);
//   * "gpulab-twins", for kernel files built with access tracing
//     (-fsanitize-coverage=trace-loads,trace-stores; kernel.hpp then defines
//     the marker gpulab_emu_traced_file).
//
// Untraced twins.  Before SanitizerCoverage
// runs, every function defined in the module gets a twin: the same optimised
// code, internal, named NAME.gpulab_plain, marked nosanitize_coverage so that
// SanitizerCoverage leaves it without hooks.  Inside the twins:
//   * direct calls to functions of the module call their twins;
//   * indirect calls first ask the runtime for the callee's twin
//       extern "C" void *gpulab_emu_plain_twin(void *function);
//     (the callee itself when it has none), so that a launch thunk that calls
//     the kernel through a pointer reaches the kernel's twin.
// A constructor registers each pair with the runtime:
//       extern "C" void gpulab_emu_register_twin(void *traced, void *plain);
// The emulator runs a block through the twins when nobody needs its accesses
// (a block outside the sample of GPULAB_EMU_CHECKS=sample): the hooks are
// then not even called.  Globals (device data, __shared__ variables, static
// locals) are not copied: both twins use the same ones.
//
// Ordering: clang registers a plugin's OptimizerLastEP callbacks before its
// own sanitizer callback, so this pass runs on the optimised IR before
// ModuleSanitizerCoveragePass (the same slot as count_pass.cpp's annotation).
//===----------------------------------------------------------------------===//

#define GPULAB_PASS_ABI_NAMES_ONLY
#include "gpulab/emu/pass_abi.hpp"  // the runtime functions this pass calls
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/Analysis/CFG.h"
#include "llvm/Analysis/DivergenceAnalysis.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/Analysis/SyncDependenceAnalysis.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/GVN.h"
#include "llvm/Transforms/Scalar/IndVarSimplify.h"
#include "llvm/Transforms/Scalar/LICM.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Scalar/LoopRotation.h"
#include "llvm/Transforms/Scalar/LoopUnrollAndJamPass.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimpleLoopUnswitch.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Vectorize/LoopVectorize.h"
#include "llvm/Transforms/Vectorize/SLPVectorizer.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace llvm;

namespace {

constexpr const char *kSuffix = ".gpulab_plain";

bool twinnable(const Function &F) {
  if (F.isDeclaration() || F.hasAvailableExternallyLinkage() || F.isIntrinsic())
    return false;
  if (F.hasFnAttribute(Attribute::NoSanitizeCoverage))
    return false;  // not traced anyway (and never a twin of ours twice)
  const StringRef N = F.getName();
  return !N.endswith(kSuffix) && !N.startswith("__sanitizer_") && !N.startswith("gpulab.twins.");
}

/// The functions of M that P accepts (collected first: the caller adds functions to M).
template <class Pred> SmallVector<Function *, 16> functions_where(Module &M, Pred P) {
  SmallVector<Function *, 16> Found;
  for (Function &F : M)
    if (P(F))
      Found.push_back(&F);
  return Found;
}

/// Fills T, a new function of F's type, with F's body (VMap maps F's arguments to T's, and may
/// map other functions to replacements); T is internal and never traced.
void clone_body(Function &F, Function &T, ValueToValueMapTy &VMap, SmallVectorImpl<ReturnInst *> &Returns) {
  auto TA = T.arg_begin();
  for (Argument &A : F.args()) {
    TA->setName(A.getName());
    VMap[&A] = &*TA++;
  }
  CloneFunctionInto(&T, &F, VMap, CloneFunctionChangeType::LocalChangesOnly, Returns);
  T.setLinkage(GlobalValue::InternalLinkage);
  T.setVisibility(GlobalValue::DefaultVisibility);
  T.setComdat(nullptr);
  T.addFnAttr(Attribute::NoSanitizeCoverage);
}

/// A constructor of M (never traced) that calls Callee once with each row of arguments.
void add_registration(Module &M, const Twine &Name, FunctionCallee Callee, ArrayRef<SmallVector<Value *, 3>> Rows) {
  LLVMContext &Ctx = M.getContext();
  Function *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(Ctx), false), GlobalValue::InternalLinkage,
                                    Name, &M);
  Ctor->addFnAttr(Attribute::NoSanitizeCoverage);
  IRBuilder<> B(BasicBlock::Create(Ctx, "entry", Ctor));
  for (const auto &Row : Rows)
    B.CreateCall(Callee, Row);
  B.CreateRetVoid();
  appendToGlobalCtors(M, Ctor, 0);
}

// ---- block loops ---------------------------------------------------------------------------
// A kernel that never meets a barrier or a warp collective computes, run by the emulator, what
// its threads compute one after another in the order of their linear index (scheduler.cpp,
// direct_main). For such a kernel K this pass writes K.gpulab_block, of K's own type: loops over
// the block's threads (z, y, then x innermost) around a copy of K's body, whose threadIdx,
// blockIdx, blockDim and gridDim are locals set by the loops (blockIdx, blockDim and gridDim
// read once, on entry). The loop and vectoriser passes then see one ordinary loop nest and may
// run several threads in one vector instruction; they keep the loops' order of effects, so the
// result is the threads' one after another. The emulator calls it once per block that nobody
// checks (gpulab_emu_register_block).
//
// Which functions: every function of the module whose address is taken and that returns void
// (the kernels a launch passes by pointer), calls nothing but LLVM intrinsics, a short list of
// C math functions, gpulab::emu::dynamic_shared_base, plain __syncthreads() and the warp
// collectives (shuffles, ballot, any, all, __syncwarp; so no atomic, no function that might read
// the index variables), and reads the index variables only by loads. A kernel with a barrier or a
// warp collective gets a region loop (below) instead.

constexpr const char *kBlockSuffix = ".gpulab_block";
constexpr const char *kEarlySuffix = ".gpulab_early";
constexpr const char *kIndexVars[] = {"threadIdx", "blockIdx", "blockDim", "gridDim"};
constexpr const char *kIndexLocal = "gpulab.index";  // metadata of a block loop's index local

/// C math functions a kernel may call in a block loop: they read no emulator state.
bool math_function(StringRef N) {
  static const StringSet<> Names = {
      "sqrt", "sqrtf", "cbrt", "cbrtf", "exp", "expf", "exp2", "exp2f", "expm1", "expm1f",
      "log", "logf", "log2", "log2f", "log10", "log10f", "log1p", "log1pf", "pow", "powf",
      "sin", "sinf", "cos", "cosf", "tan", "tanf", "asin", "asinf", "acos", "acosf", "atan",
      "atanf", "atan2", "atan2f", "sinh", "sinhf", "cosh", "coshf", "tanh", "tanhf", "erf",
      "erff", "erfc", "erfcf", "fabs", "fabsf", "floor", "floorf", "ceil", "ceilf", "round",
      "roundf", "trunc", "truncf", "fmod", "fmodf", "fmin", "fminf", "fmax", "fmaxf", "fma",
      "fmaf", "hypot", "hypotf", "copysign", "copysignf", "ldexp", "ldexpf", "rint", "rintf"};
  return Names.count(N) > 0;
}

constexpr const char *kSyncBlock = "_ZN6gpulab3emu10sync_blockENS0_9BarrierOpEiPKci";

/// A plain __syncthreads() whose place (file and line, as the emulator names it) is known here.
bool plain_barrier(const CallBase &CB, StringRef *File = nullptr, uint64_t *Line = nullptr) {
  const Function *Callee = CB.getCalledFunction();
  if (!Callee || Callee->getName() != kSyncBlock || CB.arg_size() != 4)
    return false;
  const auto *Op = dyn_cast<ConstantInt>(CB.getArgOperand(0));
  const auto *L = dyn_cast<ConstantInt>(CB.getArgOperand(3));
  StringRef S;
  if (!Op || !Op->isZero() || !L || !getConstantStringInfo(CB.getArgOperand(2), S))
    return false;
  if (File)
    *File = S;
  if (Line)
    *Line = L->getZExtValue();
  return true;
}

constexpr const char *kDynamicShared = "_ZN6gpulab3emu19dynamic_shared_baseEv";

/// gpulab::emu::dynamic_shared_base(): the block's dynamic shared memory, the same address for
/// every thread of the block (its worker's buffer); reads nothing else, writes nothing.
bool dynamic_shared_base(const CallBase &CB) {
  const Function *Callee = CB.getCalledFunction();
  return Callee && Callee->getName() == kDynamicShared && CB.arg_size() == 0;
}

constexpr const char *kWarpCollective = "_ZN6gpulab3emu15warp_collectiveENS0_6WarpOpEymiPKci";
constexpr const char *kShuffleSource = "_ZN6gpulab3emu14shuffle_sourceENS0_6WarpOpEiiPKci";
// gpulab::emu::WarpOp's values (runtime.hpp).
enum : uint64_t { kOpSync = 0, kOpShfl = 1, kOpShflXor = 4, kOpBallot = 5, kOpAll = 7 };

/// gpulab::emu::shuffle_source(op, arg, width, file, line) with a constant kind of shuffle, whose
/// every use is the source operand of a shuffle (warp_collective with op shfl).
bool shuffle_source_call(const Value *V) {
  const auto *CB = dyn_cast<CallInst>(V);
  const Function *Callee = CB ? CB->getCalledFunction() : nullptr;
  if (!Callee || Callee->getName() != kShuffleSource || CB->arg_size() != 5)
    return false;
  const auto *Op = dyn_cast<ConstantInt>(CB->getArgOperand(0));
  if (!Op || Op->getZExtValue() < kOpShfl || Op->getZExtValue() > kOpShflXor)
    return false;
  for (const Use &U : CB->uses()) {
    const auto *C = dyn_cast<CallInst>(U.getUser());
    const Function *F = C ? C->getCalledFunction() : nullptr;
    if (!F || F->getName() != kWarpCollective || C->arg_size() != 6 || U.getOperandNo() != 3)
      return false;
    const auto *COp = dyn_cast<ConstantInt>(C->getArgOperand(0));
    if (!COp || COp->getZExtValue() != kOpShfl)
      return false;
  }
  return true;
}

/// A warp collective the block loops can run (see "warp collectives in region loops"): a call of
/// gpulab::emu::warp_collective(op, mask, value, src, file, line) whose kind, file and line are
/// constants; a shuffle's source from shuffle_source, any other's -1. Op gets the kind to tell the
/// runtime (a shuffle's own: shfl, shfl_up, shfl_down or shfl_xor), Arg and Width the shuffle's.
bool warp_collective_call(const CallBase &CB, uint64_t *Op = nullptr, Value **Arg = nullptr, Value **Width = nullptr,
                          StringRef *File = nullptr, uint64_t *Line = nullptr) {
  const Function *Callee = CB.getCalledFunction();
  if (!Callee || Callee->getName() != kWarpCollective || CB.arg_size() != 6)
    return false;
  const auto *K = dyn_cast<ConstantInt>(CB.getArgOperand(0));
  const auto *L = dyn_cast<ConstantInt>(CB.getArgOperand(5));
  StringRef S;
  if (!K || !L || !getConstantStringInfo(CB.getArgOperand(4), S))
    return false;
  const uint64_t Kind = K->getZExtValue();
  Value *Src = CB.getArgOperand(3);
  if (Kind == kOpShfl) {
    if (!shuffle_source_call(Src))
      return false;
    const auto *SS = cast<CallInst>(Src);
    if (Op)
      *Op = cast<ConstantInt>(SS->getArgOperand(0))->getZExtValue();
    if (Arg)
      *Arg = SS->getArgOperand(1);
    if (Width)
      *Width = SS->getArgOperand(2);
  } else {
    const auto *C = dyn_cast<ConstantInt>(Src);
    if (!(Kind == kOpSync || (Kind >= kOpBallot && Kind <= kOpAll)) || !C || !C->isMinusOne())
      return false;
    if (Op)
      *Op = Kind;
    if (Arg)
      *Arg = ConstantInt::get(Type::getInt32Ty(CB.getContext()), 0);
    if (Width)
      *Width = ConstantInt::get(Type::getInt32Ty(CB.getContext()), 0);
  }
  if (File)
    *File = S;
  if (Line)
    *Line = L->getZExtValue();
  return true;
}

/// In a copy that runs a whole block, dynamic_shared_base() is a constant the loop passes may
/// hoist out of the loops over the threads.
void dynamic_shared_is_constant(Function &B) {
  for (Instruction &I : instructions(B))
    if (auto *CB = dyn_cast<CallInst>(&I); CB && dynamic_shared_base(*CB)) {
      CB->setDoesNotAccessMemory();
      CB->setDoesNotThrow();
      CB->addFnAttr(Attribute::WillReturn);
    }
}

bool block_loop_candidate(const Function &F) {
  if (F.isDeclaration() || F.isVarArg() || !F.getReturnType()->isVoidTy() || F.isIntrinsic())
    return false;
  const StringRef N = F.getName();
  if (N.endswith(kSuffix) || N.endswith(kBlockSuffix) || N.endswith(kEarlySuffix) || N.endswith(".jam") ||
      N.startswith("gpulab.twins.") ||
      N.startswith("__sanitizer_"))
    return false;
  if (!F.hasAddressTaken())
    return false;
  for (const Instruction &I : instructions(F)) {
    const auto *CB = dyn_cast<CallBase>(&I);
    if (!CB)
      continue;
    if (!isa<CallInst>(CB) || CB->isInlineAsm())
      return false;
    const Function *Callee = CB->getCalledFunction();
    if (!Callee)
      return false;
    if (Callee->isIntrinsic() || plain_barrier(*CB) || dynamic_shared_base(*CB) || warp_collective_call(*CB) ||
        shuffle_source_call(CB))
      continue;
    if (!Callee->isDeclaration() || !math_function(Callee->getName()))
      return false;
  }
  return true;
}

bool uses_global(const Constant *C, const GlobalVariable *G) {
  if (C == G)
    return true;
  if (const auto *CE = dyn_cast<ConstantExpr>(C))
    for (const Use &U : CE->operands())
      if (uses_global(cast<Constant>(U.get()), G))
        return true;
  return false;
}

/// C with G replaced by A, as instructions before Before (constant expressions of G become
/// instructions: A is not a constant).
Value *rebuild(Constant *C, GlobalVariable *G, Value *A, Instruction *Before) {
  if (C == G)
    return A;
  auto *CE = dyn_cast<ConstantExpr>(C);
  if (!CE || !uses_global(CE, G))
    return C;
  Instruction *NI = CE->getAsInstruction(Before);
  for (unsigned i = 0; i < NI->getNumOperands(); ++i)
    if (auto *OC = dyn_cast<Constant>(NI->getOperand(i)))
      NI->setOperand(i, rebuild(OC, G, A, NI));
  return NI;
}

/// Every use of G in F now uses A.
void replace_in_function(Function &F, GlobalVariable *G, Value *A) {
  SmallVector<std::pair<Instruction *, unsigned>, 16> Sites;
  for (Instruction &I : instructions(F))
    for (unsigned i = 0; i < I.getNumOperands(); ++i)
      if (auto *C = dyn_cast<Constant>(I.getOperand(i)))
        if (uses_global(C, G))
          Sites.emplace_back(&I, i);
  for (auto &[I, i] : Sites) {
    Instruction *Before = I;
    if (auto *Phi = dyn_cast<PHINode>(I))
      Before = Phi->getIncomingBlock(i)->getTerminator();
    I->setOperand(i, rebuild(cast<Constant>(I->getOperand(i)), G, A, Before));
  }
}

/// Only loads read through P (and the stores and copies listed in Own write it).
bool only_read(Value *P, const SmallPtrSetImpl<Instruction *> &Own) {
  for (User *U : P->users()) {
    auto *I = dyn_cast<Instruction>(U);
    if (!I)
      return false;
    if (Own.count(I))
      continue;
    if (auto *L = dyn_cast<LoadInst>(I)) {
      if (L->getPointerOperand() != P)
        return false;
    } else if (isa<GetElementPtrInst>(I) || isa<BitCastInst>(I)) {
      if (I->getOperand(0) != P || !only_read(I, Own))
        return false;
    } else if (auto *MT = dyn_cast<MemTransferInst>(I)) {
      if (MT->getRawSource() != P || MT->getRawDest() == P)
        return false;
    } else if (auto *II = dyn_cast<IntrinsicInst>(I)) {
      if (!II->isLifetimeStartOrEnd())
        return false;
    } else {
      return false;
    }
  }
  return true;
}

/// {i32, i32, i32}: uint3 and dim3 as clang lays them out.
bool three_ints(Type *T) {
  auto *S = dyn_cast<StructType>(T);
  if (!S || S->getNumElements() != 3)
    return false;
  for (Type *E : S->elements())
    if (!E->isIntegerTy(32))
      return false;
  return true;
}

/// The module's index variable Name (declared if the kernel file never reads it).
GlobalVariable *index_variable(Module &M, StringRef Name, StructType *Uint3) {
  if (GlobalVariable *G = M.getNamedGlobal(Name))
    return G;
  auto *G = new GlobalVariable(M, Uint3, false, GlobalValue::ExternalLinkage, nullptr, Name, nullptr,
                               GlobalValue::InitialExecTLSModel);
  return G;
}

/// The module's index variables (threadIdx, blockIdx, blockDim, gridDim; declared where the file
/// never reads one) and their type, if F is a kernel of the kind block loops are for: it reads
/// threadIdx, and the variables are the emulator's (thread-local structs of three ints).
bool kernel_index_variables(Function &F, GlobalVariable *Vars[4], StructType *&Uint3) {
  Module &M = *F.getParent();
  Uint3 = nullptr;
  for (int k = 0; k < 4; ++k) {
    GlobalVariable *G = M.getNamedGlobal(kIndexVars[k]);
    if (G && (!three_ints(G->getValueType()) || !G->isThreadLocal()))
      return false;
    if (G && !Uint3)
      Uint3 = cast<StructType>(G->getValueType());
  }
  if (!Uint3)
    return false;  // reads no index variable: not a kernel of this kind
  GlobalVariable *Tid = M.getNamedGlobal(kIndexVars[0]);
  bool ReadsTid = false;
  for (const Instruction &I : instructions(F))
    for (const Use &U : I.operands())
      if (const auto *C = dyn_cast<Constant>(U.get()))
        ReadsTid |= Tid && uses_global(C, Tid);
  if (!ReadsTid)
    return false;  // the same work in every thread: nothing to gain
  for (int k = 0; k < 4; ++k)
    Vars[k] = index_variable(M, kIndexVars[k], Uint3);
  return true;
}

/// What the compiler knew of one thread's accesses does not hold across the block's threads:
/// `__restrict__` (noalias) parameters and scopes promise nothing between threads, and a
/// type-based no-alias answer could move one thread's load above another's store of another
/// type. Drops them all from B: its loops then order the threads' accesses exactly as written.
void forget_one_thread_facts(Function &B) {
  for (Argument &A : B.args())
    A.removeAttr(Attribute::NoAlias);
  for (Instruction &I : instructions(B)) {
    I.setMetadata(LLVMContext::MD_noalias, nullptr);
    I.setMetadata(LLVMContext::MD_alias_scope, nullptr);
    I.setMetadata(LLVMContext::MD_tbaa, nullptr);
    I.setMetadata(LLVMContext::MD_tbaa_struct, nullptr);
  }
}

/// The loop over a row's threads is marked (its loop ID holds kThreadLoopMark), so that a copy of
/// the block function can ask for it to be unrolled and jammed (Jam > 0, see "thread jam").
constexpr const char *kThreadLoopMark = "gpulab.threads";
MDNode *thread_loop_id(LLVMContext &Ctx, unsigned Jam) {
  SmallVector<Metadata *, 3> Ops{nullptr, MDNode::get(Ctx, MDString::get(Ctx, kThreadLoopMark))};
  if (Jam)
    Ops.push_back(MDNode::get(Ctx, {MDString::get(Ctx, "llvm.loop.unroll_and_jam.count"),
                                    ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(Ctx), Jam))}));
  MDNode *Id = MDNode::getDistinct(Ctx, Ops);
  Id->replaceOperandWith(0, Id);
  return Id;
}
constexpr const char *kThreadX = "gpulab.tx";  // metadata of the phi that is a thread loop's threadIdx.x
bool thread_loop_latch(const Instruction &I) {
  const MDNode *Id = I.getMetadata(LLVMContext::MD_loop);
  if (!Id)
    return false;
  for (const MDOperand &Op : Id->operands())
    if (const auto *N = dyn_cast_or_null<MDNode>(Op.get()); N && N != Id && N->getNumOperands() > 0)
      if (const auto *S = dyn_cast<MDString>(N->getOperand(0)); S && S->getString() == kThreadLoopMark)
        return true;
  return false;
}

/// The threads of linear index Lo to Hi - 1, in order, entered from Pre (which gets its branch
/// here) and left to Out: a loop over the rows they cover, around a loop over x within the row
/// (Lo's coordinates are divided out once; each row then starts where the last ended). XHead,
/// where the thread is (X, Y, Z) of linear index Lin, is left open for the caller: its code must
/// end in a branch to XLatch.
struct ThreadRange {
  Value *X, *Y, *Z, *Lin;
  BasicBlock *XHead, *XLatch;
};
ThreadRange thread_range(Function &B, BasicBlock *Pre, Value *const Dim[3], Value *Lo, Value *Hi, BasicBlock *Out,
                         const Twine &Name, bool WholeBlock = false) {
  LLVMContext &Ctx = B.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);
  BasicBlock *RowHead = BasicBlock::Create(Ctx, Name + ".row", &B, Out);
  BasicBlock *Row = BasicBlock::Create(Ctx, Name + ".row.body", &B, Out);
  BasicBlock *XHead = BasicBlock::Create(Ctx, Name + ".x", &B, Out);
  BasicBlock *XLatch = BasicBlock::Create(Ctx, Name + ".x.next", &B, Out);
  BasicBlock *RowLatch = BasicBlock::Create(Ctx, Name + ".row.next", &B, Out);
  IRBuilder<> PB(Pre);
  Value *Rows = PB.CreateUDiv(Lo, Dim[0]);
  Value *X0 = PB.CreateURem(Lo, Dim[0]), *Y0 = PB.CreateURem(Rows, Dim[1]), *Z0 = PB.CreateUDiv(Rows, Dim[1]);
  PB.CreateBr(RowHead);
  IRBuilder<> H(RowHead);
  auto phi = [&](Value *First, const char *Var) {
    PHINode *P = H.CreatePHI(I32, 2, Var);
    P->addIncoming(First, Pre);
    return P;
  };
  PHINode *Start = phi(Lo, "gpulab.row.lin"), *XS = phi(X0, "gpulab.row.x"), *Y = phi(Y0, "gpulab.ty"),
          *Z = phi(Z0, "gpulab.tz");
  H.CreateCondBr(H.CreateICmpULT(Start, Hi), Row, Out);
  IRBuilder<> RB(Row);
  // Every row whole where the range is the block's (Lo 0, Hi the block's size): a count the same
  // for every row, as LoopUnrollAndJam needs of a loop nest.
  Value *Count = WholeBlock ? Dim[0]
                            : RB.CreateBinaryIntrinsic(Intrinsic::umin, RB.CreateSub(Dim[0], XS), RB.CreateSub(Hi, Start));
  Value *XEnd = RB.CreateAdd(XS, Count, "gpulab.x.end");
  RB.CreateBr(XHead);
  IRBuilder<> XB(XHead);
  PHINode *X = XB.CreatePHI(I32, 2, "gpulab.tx");
  X->setMetadata(kThreadX, MDNode::get(Ctx, {}));  // (names are dropped; uniform_inner_trips reads this)
  X->addIncoming(XS, Row);
  Value *Lin = XB.CreateAdd(Start, XB.CreateSub(X, XS), "gpulab.lin");
  IRBuilder<> XL(XLatch);
  Value *XNext = XL.CreateAdd(X, ConstantInt::get(I32, 1), "gpulab.tx.next", true, true);
  BranchInst *Back = XL.CreateCondBr(XL.CreateICmpULT(XNext, XEnd), XHead, RowLatch);
  Back->setMetadata(LLVMContext::MD_loop, thread_loop_id(Ctx, 0));
  X->addIncoming(XNext, XLatch);
  IRBuilder<> RL(RowLatch);
  Value *YNext = RL.CreateAdd(Y, ConstantInt::get(I32, 1));
  Value *Wrap = RL.CreateICmpEQ(YNext, Dim[1]);
  Start->addIncoming(RL.CreateAdd(Start, Count), RowLatch);
  XS->addIncoming(ConstantInt::get(I32, 0), RowLatch);
  Y->addIncoming(RL.CreateSelect(Wrap, ConstantInt::get(I32, 0), YNext), RowLatch);
  Z->addIncoming(RL.CreateAdd(Z, RL.CreateZExt(Wrap, I32)), RowLatch);
  RL.CreateBr(RowHead);
  return {X, Y, Z, Lin, XHead, XLatch};
}

Function *make_block_loop(Function &F) {
  Module &M = *F.getParent();
  LLVMContext &Ctx = M.getContext();
  const DataLayout &DL = M.getDataLayout();
  Type *I32 = Type::getInt32Ty(Ctx);
  StructType *Uint3 = nullptr;
  GlobalVariable *Vars[4];
  if (!kernel_index_variables(F, Vars, Uint3))
    return nullptr;

  ValueToValueMapTy VMap;
  Function *B = Function::Create(F.getFunctionType(), GlobalValue::InternalLinkage, F.getAddressSpace(),
                                 F.getName() + kBlockSuffix, &M);
  SmallVector<ReturnInst *, 8> Returns;
  clone_body(F, *B, VMap, Returns);
  B->removeFnAttr(Attribute::NoInline);
  B->removeFnAttr(Attribute::OptimizeNone);
  forget_one_thread_facts(*B);
  dynamic_shared_is_constant(*B);

  BasicBlock *Body = &B->getEntryBlock();
  BasicBlock *Entry = BasicBlock::Create(Ctx, "gpulab.entry", B, Body);
  BasicBlock *Exit = BasicBlock::Create(Ctx, "gpulab.exit", B);

  SmallPtrSet<Instruction *, 16> Own;
  IRBuilder<> IB(Entry);
  AllocaInst *Local[4];
  for (int k = 0; k < 4; ++k) {
    Local[k] = IB.CreateAlloca(Uint3, nullptr, std::string("gpulab.") + kIndexVars[k]);
    // (names are dropped where clang discards value names; index_sums_without_wrap reads this)
    Local[k]->setMetadata(kIndexLocal, MDNode::get(Ctx, MDString::get(Ctx, kIndexVars[k])));
  }
  // The body's index variables are the locals (before anything below reads the real ones).
  for (int k = 0; k < 4; ++k)
    replace_in_function(*B, Vars[k], Local[k]);
  auto field = [&](Value *P, unsigned i) { return IB.CreateStructGEP(Uint3, P, i); };
  Value *Dim[3];
  for (int k = 1; k < 4; ++k)  // blockIdx, blockDim, gridDim: the same for every thread of the block
    for (unsigned i = 0; i < 3; ++i) {
      Value *V = IB.CreateLoad(I32, field(Vars[k], i));
      auto *GEP = cast<Instruction>(field(Local[k], i));
      Own.insert(GEP);
      Own.insert(IB.CreateStore(V, GEP));
      if (k == 2)
        Dim[i] = V;
    }
  Value *N = IB.CreateMul(IB.CreateMul(Dim[0], Dim[1]), Dim[2], "gpulab.n");
  const ThreadRange Loops = thread_range(*B, Entry, Dim, ConstantInt::get(I32, 0), N, Exit, "gpulab", true);
  // Static allocas of the kernel: once for the block (each thread's copy, one after another).
  // Any other (a run-time size, an alloca in a loop) would pile up over the block's threads on
  // the one stack: no block loop then.
  for (Instruction &I : make_early_inc_range(*Body))
    if (auto *AI = dyn_cast<AllocaInst>(&I))
      if (isa<ConstantInt>(AI->getArraySize()))
        AI->moveBefore(Entry->getTerminator());
  for (Instruction &I : instructions(*B))
    if (isa<AllocaInst>(&I) && I.getParent() != Entry) {
      B->eraseFromParent();
      return nullptr;
    }
  // A parameter passed by value in memory (a struct of more than 16 bytes on x86-64) is each
  // thread's own copy, which the kernel may write: each thread of the loop gets a fresh copy of
  // the caller's.
  SmallVector<std::pair<Argument *, AllocaInst *>, 4> ByVal;
  for (Argument &A : B->args()) {
    if (A.hasInAllocaAttr() || A.hasPreallocatedAttr()) {
      B->eraseFromParent();
      return nullptr;
    }
    if (A.hasByValAttr()) {
      AllocaInst *Copy = new AllocaInst(A.getParamByValType(), DL.getAllocaAddrSpace(), nullptr,
                                        A.getParamAlign().valueOrOne(), A.getName() + ".thread",
                                        Entry->getTerminator());
      A.replaceAllUsesWith(Copy);
      ByVal.emplace_back(&A, Copy);
    }
  }
  {
    IRBuilder<> H(Loops.XHead);
    Value *T[3] = {Loops.X, Loops.Y, Loops.Z};
    for (unsigned i = 0; i < 3; ++i) {
      auto *GEP = cast<Instruction>(H.CreateStructGEP(Uint3, Local[0], i));
      Own.insert(GEP);
      Own.insert(H.CreateStore(T[i], GEP));
    }
    for (auto &[A, Copy] : ByVal)
      H.CreateMemCpy(Copy, Copy->getAlign(), A, A->getParamAlign(),
                     DL.getTypeAllocSize(A->getParamByValType()).getFixedSize());
    H.CreateBr(Body);
  }
  for (ReturnInst *R : Returns) {
    BranchInst::Create(Loops.XLatch, R);
    R->eraseFromParent();
  }
  ReturnInst::Create(Ctx, Exit);

  for (int k = 0; k < 4; ++k)
    if (!only_read(Local[k], Own)) {
      B->eraseFromParent();
      return nullptr;
    }

  return B;
}

// ---- thread jam: several threads' inner loops run together -----------------------------------
// A block loop runs each thread to its end before the next starts. Where each thread runs a loop
// of its own (a dot product over k, say), a thread's accesses stride far apart and its loop is
// one chain of dependent operations; the GPU runs a warp's threads together. The jam copy of a
// block function (NAME.gpulab_block.jam) asks LLVM to unroll the loop over a row's threads by
// 16 (8 or 4 for a larger inner loop, none above kJamMaxInner instructions) and jam the copies
// of the thread's inner loop into one (LoopUnrollAndJam); the loop then holds that many
// independent chains over neighbouring addresses, which the SLP vectoriser packs into vectors.
//
// Jamming reorders memory accesses between threads (thread t's accesses after its loop come after
// thread t+1's loop), so LLVM does it only where its dependence analysis proves that no access
// it moves past another touches the same bytes. Across parameters it can prove nothing unless
// told: in the jam copy, each access through a pointer parameter, or to a __shared__ variable,
// gets an alias scope of its own object and is declared apart from every other object's
// accesses. That holds when the parameters point into different allocations, which the block
// function asks the runtime before each block,
//     extern "C" int gpulab_emu_pointers_apart(void *const *pointers, int count,
//                                              unsigned long long written);
// (1: every two pointers of which one is written through, bit i of written for pointers[i], lie
// in different device allocations), and runs the plain block loop where they do not. Accesses
// through any other pointer (one loaded from memory, chosen by a select) get no scope: LLVM then
// assumes they may touch anything, and does not jam around them.

constexpr unsigned kJamMaxInner = 240;
constexpr const char *kJamBlock = gpulab::emu::pass_abi::jam_block;

/// How many threads to jam for inner loops of Size instructions in all: 16 keeps 4 vectors of 4
/// chains in flight (the naive SGEMM: 8 gave 1.6x the plain loops' time, 16 gave 0.8x); fewer
/// for larger loops, whose 16 copies would only grow the code.
unsigned jam_threads(unsigned Size) { return Size <= 60 ? 16 : Size <= 120 ? 8 : Size <= kJamMaxInner ? 4 : 0; }

/// The global index of dimension d, blockIdx.d * blockDim.d + threadIdx.d (or blockIdx.d times a
/// constant tile, or shifted), is computed in 32-bit arithmetic that may wrap, so LLVM cannot tell
/// that neighbouring threads' addresses are neighbours (the loads of b[k * n + col] stay scalar).
/// In a copy of a block loop such sums (and their products) are marked as not wrapping; the block
/// loop runs the copy only where no such sum can reach 2^31 - 1 in this grid:
/// (gridDim.d - 1) * scale + blockDim.d - 1 below 2^31, the scale blockDim.d or the constant.
struct IndexSum {
  unsigned D;
  uint64_t Scale;  ///< 0: blockDim.d
  bool operator==(const IndexSum &O) const { return D == O.D && Scale == O.Scale; }
};
SmallVector<IndexSum, 4> index_sums_without_wrap(Function &J) {
  AllocaInst *Local[3] = {nullptr, nullptr, nullptr};  // threadIdx, blockIdx, blockDim
  for (Instruction &I : J.getEntryBlock())
    if (auto *A = dyn_cast<AllocaInst>(&I); A && A->getMetadata(kIndexLocal))
      for (int K = 0; K < 3; ++K)
        if (cast<MDString>(A->getMetadata(kIndexLocal)->getOperand(0))->getString() == kIndexVars[K])
          Local[K] = A;
  // Dimension of a load of field d of the index local K, or -1.
  auto field = [&](Value *V, int K) -> int {
    auto *L = dyn_cast<LoadInst>(V);
    auto *G = L ? dyn_cast<GetElementPtrInst>(L->getPointerOperand()) : nullptr;
    if (!Local[K] || !G || G->getPointerOperand() != Local[K] || G->getNumIndices() != 2 || !G->hasAllConstantIndices())
      return -1;
    return static_cast<int>(cast<ConstantInt>(G->getOperand(2))->getZExtValue());
  };
  // blockIdx.d * blockDim.d, blockIdx.d * C or blockIdx.d << c: the scale (0 for blockDim), or -1.
  auto scaled_block = [&](Value *V, int D) -> int64_t {
    auto *Op = dyn_cast<BinaryOperator>(V);
    if (!Op)
      return -1;
    for (int Side = 0; Side < 2; ++Side) {
      if (field(Op->getOperand(Side), 1) != D)
        continue;
      Value *Other = Op->getOperand(1 - Side);
      const auto *C = dyn_cast<ConstantInt>(Other);
      if (Op->getOpcode() == Instruction::Mul && field(Other, 2) == D)
        return 0;
      if (Op->getOpcode() == Instruction::Mul && C && C->getSExtValue() >= 1 && C->getSExtValue() <= (1 << 20))
        return C->getSExtValue();
      if (Op->getOpcode() == Instruction::Shl && Side == 0 && C && C->getZExtValue() <= 20)
        return int64_t(1) << C->getZExtValue();
    }
    return -1;
  };
  SmallVector<IndexSum, 4> Sums;
  for (Instruction &I : instructions(J)) {
    auto *Add = dyn_cast<BinaryOperator>(&I);
    if (!Add || Add->getOpcode() != Instruction::Add || !Add->getType()->isIntegerTy(32))
      continue;
    for (int Side = 0; Side < 2; ++Side) {
      const int D = field(Add->getOperand(1 - Side), 0);
      const int64_t Scale = D < 0 ? -1 : scaled_block(Add->getOperand(Side), D);
      if (Scale < 0)
        continue;
      for (auto *Op : {cast<BinaryOperator>(Add->getOperand(Side)), Add}) {
        Op->setHasNoSignedWrap(true);
        Op->setHasNoUnsignedWrap(true);
      }
      const IndexSum Sum{static_cast<unsigned>(D), static_cast<uint64_t>(Scale)};
      if (std::find(Sums.begin(), Sums.end(), Sum) == Sums.end())
        Sums.push_back(Sum);
      break;
    }
  }
  return Sums;
}

/// The object a memory access of I reaches, where it is one the block loops can name: a pointer
/// parameter, a thread-local (__shared__) variable, or the context a region loop keeps its
/// threads' values in (gpulab_emu_block_scratch: a buffer of the block's own); else null. Loads and
/// stores, and atomics where asked; Write says whether I writes.
Value *named_object(Instruction &I, bool Atomics, bool &Write) {
  Value *P = nullptr;
  Write = false;
  if (auto *L = dyn_cast<LoadInst>(&I))
    P = L->getPointerOperand();
  else if (auto *S = dyn_cast<StoreInst>(&I))
    P = S->getPointerOperand(), Write = true;
  else if (auto *A = dyn_cast<AtomicRMWInst>(&I); A && Atomics)
    P = A->getPointerOperand(), Write = true;
  else if (auto *X = dyn_cast<AtomicCmpXchgInst>(&I); X && Atomics)
    P = X->getPointerOperand(), Write = true;
  if (!P)
    return nullptr;
  Value *O = getUnderlyingObject(P, 0);
  const auto *G = dyn_cast<GlobalVariable>(O);
  const auto *CB = dyn_cast<CallBase>(O);
  const Function *Callee = CB ? CB->getCalledFunction() : nullptr;
  return (isa<Argument>(O) && O->getType()->isPointerTy()) || (G && G->isThreadLocal()) ||
                 (Callee && Callee->getName() == gpulab::emu::pass_abi::block_scratch)
             ? O
             : nullptr;
}

/// Alias scopes that declare the accesses of each of Objects objects apart from every other
/// object's: each access (with its object's number) gets its object's scope and a no-alias list of
/// all the others.
void declare_apart(LLVMContext &Ctx, unsigned Objects, ArrayRef<std::pair<Instruction *, unsigned>> Accesses,
                   StringRef DomainName) {
  MDBuilder MDB(Ctx);
  MDNode *Domain = MDB.createAnonymousAliasScopeDomain(DomainName);
  SmallVector<Metadata *, 8> Scopes;
  for (unsigned K = 0; K < Objects; ++K)
    Scopes.push_back(MDB.createAnonymousAliasScope(Domain));
  for (const auto &[I, K] : Accesses) {
    SmallVector<Metadata *, 8> Others;
    for (unsigned O = 0; O < Objects; ++O)
      if (O != K)
        Others.push_back(Scopes[O]);
    I->setMetadata(LLVMContext::MD_alias_scope, MDNode::get(Ctx, {Scopes[K]}));
    I->setMetadata(LLVMContext::MD_noalias, MDNode::get(Ctx, Others));
  }
}

/// A pointer parameter never points into a block's shared memory (the host cannot know where that
/// is), so every access through a parameter is apart from every access to a __shared__ variable
/// (thread-local in the emulator), and those variables from each other: alias scopes that say so,
/// on any block function (the parameters among themselves stay as they were: they may overlap).
/// The loops over the threads then vectorise a tile's loads from global memory into shared.
void scope_shared_apart(Function &B) {
  SmallVector<Value *, 8> Objects{nullptr};  // [0]: the parameters, together
  SmallVector<std::pair<Instruction *, unsigned>, 32> Accesses;
  for (Instruction &I : instructions(B)) {
    bool Write;
    Value *O = named_object(I, false, Write);
    if (!O)
      continue;
    unsigned K = 0;  // a parameter
    if (!isa<Argument>(O)) {
      K = std::find(Objects.begin(), Objects.end(), O) - Objects.begin();
      if (K == Objects.size())
        Objects.push_back(O);
    }
    Accesses.emplace_back(&I, K);
  }
  if (Objects.size() > 1)
    declare_apart(B.getContext(), Objects.size(), Accesses, "gpulab.shared");
}

/// Where B's block may run Copy instead (a copy of B's work with more facts, of B's type), B's
/// entry calls it and returns: where the index sums of the dimensions in Dims cannot wrap (see
/// index_sums_without_wrap: gridDim.d * blockDim.d below 2^31), and, when two or more pointers are
/// Checked and one of them is written (bit i of Written for Checked[i]), where the runtime finds
/// them in different allocations (gpulab_emu_pointers_apart). Elsewhere B goes on as before.
void call_copy_where(Function &B, Function &Copy, ArrayRef<IndexSum> Sums, ArrayRef<Value *> Checked,
                     uint64_t Written) {
  Module &M = *B.getParent();
  LLVMContext &Ctx = M.getContext();
  Type *I8Ptr = Type::getInt8PtrTy(Ctx);
  Type *I32 = Type::getInt32Ty(Ctx), *I64 = Type::getInt64Ty(Ctx);
  BasicBlock &Entry = B.getEntryBlock();
  auto *Term = cast<BranchInst>(Entry.getTerminator());
  BasicBlock *Run = BasicBlock::Create(Ctx, "gpulab.copy", &B);
  IRBuilder<> RB(Run);
  SmallVector<Value *, 8> Args;
  for (Argument &A : B.args())
    Args.push_back(&A);
  CallInst *Call = RB.CreateCall(&Copy, Args);
  Call->setAttributes(Copy.getAttributes());
  if (DISubprogram *SP = B.getSubprogram())  // a call that could be inlined needs a place
    Call->setDebugLoc(DILocation::get(Ctx, SP->getLine(), 0, SP));
  RB.CreateRetVoid();
  BasicBlock *Plain = Term->getSuccessor(0);
  IRBuilder<> IB(Term);
  // The index sums first, since that costs nothing, then the pointers.
  Value *Fits = IB.getTrue();
  for (const IndexSum &Sum : Sums) {
    auto dim = [&](const char *Var) {
      GlobalVariable *G = M.getNamedGlobal(Var);
      return IB.CreateZExt(IB.CreateLoad(I32, IB.CreateConstInBoundsGEP2_32(G->getValueType(), G, 0, Sum.D)), I64);
    };
    // (gridDim - 1) * scale + blockDim - 1, each below 2^32 and the scale below 2^32: no wrap
    Value *BlockDim = dim("blockDim");
    Value *Scale = Sum.Scale ? ConstantInt::get(I64, Sum.Scale) : BlockDim;
    Value *Last = IB.CreateAdd(IB.CreateMul(IB.CreateSub(dim("gridDim"), ConstantInt::get(I64, 1)), Scale),
                               IB.CreateSub(BlockDim, ConstantInt::get(I64, 1)));
    Fits = IB.CreateAnd(Fits, IB.CreateICmpULT(Last, ConstantInt::get(I64, 0x7fffffff)));
  }
  if (!Sums.empty()) {
    BasicBlock *Check = BasicBlock::Create(Ctx, "gpulab.copy.check", &B, Run);
    IB.CreateCondBr(Fits, Check, Plain);
    Term->eraseFromParent();
    for (PHINode &P : Plain->phis())
      P.addIncoming(P.getIncomingValueForBlock(&Entry), Check);
    Term = BranchInst::Create(Plain, Check);
    IB.SetInsertPoint(Term);
  }
  Value *Apart = IB.getTrue();
  if (Checked.size() > 1 && Written) {
    auto *Array = ArrayType::get(I8Ptr, Checked.size());
    auto *Pointers = new AllocaInst(Array, M.getDataLayout().getAllocaAddrSpace(), "gpulab.pointers",
                                    &*Entry.getFirstInsertionPt());
    for (unsigned K = 0; K < Checked.size(); ++K)
      IB.CreateStore(IB.CreatePointerCast(Checked[K], I8Ptr), IB.CreateConstInBoundsGEP2_32(Array, Pointers, 0, K));
    FunctionCallee Check = M.getOrInsertFunction(gpulab::emu::pass_abi::pointers_apart,
                                                 FunctionType::get(I32, {I8Ptr->getPointerTo(), I32, I64}, false));
    Value *Got = IB.CreateCall(Check, {IB.CreateConstInBoundsGEP2_32(Array, Pointers, 0, 0),
                                       ConstantInt::get(I32, Checked.size()), ConstantInt::get(I64, Written)});
    Apart = IB.CreateICmpNE(Got, ConstantInt::get(I32, 0));
  }
  IB.CreateCondBr(Apart, Run, Plain);
  Term->eraseFromParent();
}

/// J, a block loop of the kernel's copy from before vectorisation and unrolling (NAME.gpulab_early:
/// an inner loop already unrolled with a remainder is not in a form LoopUnrollAndJam takes), becomes
/// B's jam copy; false (J to be erased) where its loop over the threads holds no inner loop.
bool make_thread_jam(Function &B, Function &J, FunctionAnalysisManager &FAM, const SmallVectorImpl<IndexSum> *Sums) {
  LoopInfo &LI = FAM.getResult<LoopAnalysis>(J);
  bool Inner = false;
  unsigned Size = 0;
  for (Loop *L : LI.getLoopsInPreorder())
    if (BasicBlock *Latch = L->getLoopLatch(); Latch && thread_loop_latch(*Latch->getTerminator()))
      for (Loop *Sub : L->getSubLoops()) {
        Inner = true;
        for (BasicBlock *BB : Sub->blocks())
          Size += BB->size();
      }
  FAM.clear(J, J.getName());
  const unsigned Threads = jam_threads(Size);
  if (!Inner || !Threads)
    return false;

  // The objects: pointer parameters and thread-local (__shared__) variables, by first access.
  SmallVector<Value *, 8> Objects;
  SmallVector<std::pair<Instruction *, unsigned>, 32> Accesses;
  uint64_t Written = 0;  // bit i: Objects[i] is a parameter written through
  for (Instruction &I : instructions(J)) {
    bool Write;
    Value *O = named_object(I, true, Write);
    if (!O)
      continue;
    unsigned K = std::find(Objects.begin(), Objects.end(), O) - Objects.begin();
    if (K == Objects.size())
      Objects.push_back(O);
    if (K >= 64)
      return false;
    Accesses.emplace_back(&I, K);
    if (Write && isa<Argument>(O))
      Written |= uint64_t(1) << K;
  }

  Module &M = *B.getParent();
  LLVMContext &Ctx = M.getContext();
  J.setName(B.getName() + (Sums ? ".wide.jam" : ".jam"));
  for (Instruction &I : instructions(J))
    if (thread_loop_latch(I))
      I.setMetadata(LLVMContext::MD_loop, thread_loop_id(Ctx, Threads));
  if (Objects.size() > 1)
    declare_apart(Ctx, Objects.size(), Accesses, "gpulab.objects");
  // Counted by the runtime, block by block (uniform_inner_trips passes 0 where a loop runs as it was).
  FunctionCallee Count = M.getOrInsertFunction(kJamBlock, FunctionType::get(Type::getVoidTy(Ctx), {Type::getInt32Ty(Ctx)}, false));
  CallInst::Create(Count, {ConstantInt::get(Type::getInt32Ty(Ctx), 1)}, "", J.getEntryBlock().getTerminator());

  // B runs J where the parameters it declared apart point into different allocations.
  SmallVector<Value *, 8> Checked;
  uint64_t CheckedWritten = 0;
  for (unsigned K = 0; K < Objects.size(); ++K)
    if (auto *A = dyn_cast<Argument>(Objects[K])) {
      if (Written >> K & 1)
        CheckedWritten |= uint64_t(1) << Checked.size();
      Checked.push_back(B.getArg(A->getArgNo()));
    }
  call_copy_where(B, J, Sums ? ArrayRef<IndexSum>(*Sums) : ArrayRef<IndexSum>(index_sums_without_wrap(J)), Checked,
                  CheckedWritten);
  FAM.invalidate(B, PreservedAnalyses::none());
  return true;
}

// ---- inner loops whose count differs between threads ----------------------------------------
// A grid-stride loop, for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride), runs a
// count of its own in each thread, and LoopUnrollAndJam jams only an inner loop whose count is the
// same in every iteration of the loop around it. Where the count of an inner loop of a loop over
// a row's threads, and whether the loop is entered at all, depend on nothing but threadIdx.x and on
// values every thread of the block holds alike from the start (the parameters, blockIdx, blockDim,
// gridDim), a jam copy checks on entry, for every threadIdx.x below blockDim.x, that the thread
// would enter the loop and run it as many times as thread 0. The thread loop is then versioned:
// where that holds, its inner loop is entered without its test and counts to thread 0's count
// instead of testing its own condition, which LoopUnrollAndJam takes; where it does not, a copy
// of the thread loop as it was runs (thread after thread). Every jam copy tells the runtime, on
// entry, whether any of its thread loops runs jammed in this block (the playground's report
// counts them block by block):
//     extern "C" void gpulab_emu_jam_block(int jammed);

/// Does S (a SCEV of a jam copy, its thread loop's recurrences written as functions of X, the
/// thread's threadIdx.x) hold nothing but X, constants, parameters and values of the entry block,
/// so that it can be computed there for any threadIdx.x?
bool known_on_entry(const SCEV *S, const Value *X, const BasicBlock &Entry, ScalarEvolution &SE) {
  return !SCEVExprContains(S, [&](const SCEV *E) {
    if (isa<SCEVAddRecExpr>(E) || isa<SCEVCouldNotCompute>(E))
      return true;
    if (const auto *D = dyn_cast<SCEVUDivExpr>(E))  // (computed for every thread: never by 0)
      return !SE.isKnownNonZero(D->getRHS());
    if (const auto *U = dyn_cast<SCEVUnknown>(E)) {
      const Value *V = U->getValue();
      if (V == X || isa<Argument>(V) || isa<Constant>(V))
        return false;
      const auto *I = dyn_cast<Instruction>(V);
      return !I || I->getParent() != &Entry;
    }
    return false;
  });
}

/// The counter of a loop Sub that goes on while Inc Pred Bound, Inc = its phi + Step (Step and
/// Bound invariant in Sub; 32 bits at most). A grid-stride counter's step, gridDim.x * blockDim.x,
/// is unsigned, so its increment may wrap and ScalarEvolution cannot count the loop; it cannot
/// wrap where Start Pred Bound, Step > 0 and Bound + Step - 1 (Bound + Step, for <=) is below the
/// type's largest value, as every increment is then of a value below Bound (or equal).
struct Counter {
  BinaryOperator *Inc = nullptr;
  const SCEV *Start = nullptr, *Step = nullptr, *Bound = nullptr;
  ICmpInst::Predicate Pred = ICmpInst::ICMP_SLT;
};
bool loop_counter(Loop &Sub, ScalarEvolution &SE, Counter &C) {
  auto *Br = dyn_cast<BranchInst>(Sub.getLoopLatch()->getTerminator());
  auto *Cmp = Br && Br->isConditional() ? dyn_cast<ICmpInst>(Br->getCondition()) : nullptr;
  if (!Cmp || !Cmp->getOperand(0)->getType()->isIntegerTy() || Cmp->getOperand(0)->getType()->getIntegerBitWidth() > 32)
    return false;
  ICmpInst::Predicate Pred = Cmp->getPredicate();
  if (Br->getSuccessor(0) != Sub.getHeader())
    Pred = CmpInst::getInversePredicate(Pred);
  Value *A = Cmp->getOperand(0), *B = Cmp->getOperand(1);
  auto counter_add = [&](Value *V) {
    auto *Add = dyn_cast<BinaryOperator>(V);
    return Add && Add->getOpcode() == Instruction::Add && Sub.contains(Add) ? Add : nullptr;
  };
  if (!counter_add(A)) {
    std::swap(A, B);
    Pred = CmpInst::getSwappedPredicate(Pred);
  }
  C.Inc = counter_add(A);
  if (!C.Inc || (Pred != ICmpInst::ICMP_SLT && Pred != ICmpInst::ICMP_SLE && Pred != ICmpInst::ICMP_ULT && Pred != ICmpInst::ICMP_ULE) ||
      !SE.isLoopInvariant(SE.getSCEV(B), &Sub))
    return false;
  for (unsigned K = 0; K < 2; ++K) {
    auto *Phi = dyn_cast<PHINode>(C.Inc->getOperand(K));
    Value *Step = C.Inc->getOperand(1 - K);
    if (!Phi || Phi->getParent() != Sub.getHeader() || Phi->getIncomingValueForBlock(Sub.getLoopLatch()) != C.Inc ||
        !SE.isLoopInvariant(SE.getSCEV(Step), &Sub))
      continue;
    C.Start = SE.getSCEV(Phi->getIncomingValueForBlock(Sub.getLoopPreheader()));
    C.Step = SE.getSCEV(Step);
    C.Bound = SE.getSCEV(B);
    C.Pred = Pred;
    return true;
  }
  return false;
}

/// L, a loop with a preheader and one exit block (in LCSSA form), runs where Flag holds; elsewhere
/// a copy of it as it was (without the no-wrap marks of Marked, which hold only where Flag does).
void version_loop(Loop &L, Value *Flag, ArrayRef<std::pair<BinaryOperator *, bool>> Marked, LoopInfo &LI,
                  DominatorTree &DT) {
  BasicBlock *Pre = L.getLoopPreheader(), *Exit = L.getExitBlock();
  BasicBlock *Head = SplitBlock(Pre, Pre->getTerminator(), &DT, &LI, nullptr, "gpulab.trips.alike");
  ValueToValueMapTy VMap;
  SmallVector<BasicBlock *, 16> Blocks;
  Loop *Own = cloneLoopWithPreheader(Head, Pre, &L, VMap, ".own", &LI, &DT, Blocks);
  remapInstructionsInBlocks(Blocks, VMap);
  for (auto [Inc, Signed] : Marked)  // (Signed: marked nsw, else nuw)
    if (auto *Copy = dyn_cast_or_null<BinaryOperator>(VMap.lookup(Inc)))
      Signed ? Copy->setHasNoSignedWrap(false) : Copy->setHasNoUnsignedWrap(false);
  Instruction *Old = Pre->getTerminator();
  BranchInst::Create(Head, cast<BasicBlock>(VMap[Head]), Flag, Old);
  Old->eraseFromParent();
  for (PHINode &P : Exit->phis()) {  // (LCSSA: every value the loop leaves passes here)
    SmallVector<std::pair<Value *, BasicBlock *>, 4> From;
    for (unsigned K = 0; K < P.getNumIncomingValues(); ++K)
      if (L.contains(P.getIncomingBlock(K))) {
        Value *V = P.getIncomingValue(K);
        From.emplace_back(VMap.count(V) ? static_cast<Value *>(VMap[V]) : V, cast<BasicBlock>(VMap[P.getIncomingBlock(K)]));
      }
    for (auto &[V, BB] : From)
      P.addIncoming(V, BB);
  }
  // The copy is no thread loop of a jam (its inner loops' counts differ between threads).
  if (BasicBlock *Latch = Own->getLoopLatch())
    Latch->getTerminator()->setMetadata(LLVMContext::MD_loop, thread_loop_id(Pre->getContext(), 0));
  DT.recalculate(*Pre->getParent());
}

/// An inner loop of a thread loop whose count is to be made the same for every thread.
struct ThreadTrips {
  Loop *L;  ///< the thread loop
  Loop *Sub;
  PHINode *X;              ///< the thread loop's threadIdx.x
  const SCEV *Count;       ///< Sub's backedge-taken count, a function of X
  BranchInst *Guard;       ///< the test before Sub (null: none), entering on EnterOn
  bool EnterOn;
  const SCEV *Left, *Right;  ///< the guard's comparison, functions of X
  ICmpInst::Predicate Pred;
  Counter Wrap;  ///< a counter marked not to wrap (Inc non-null), its terms functions of X
};

/// Makes the inner loops of J's thread loops count alike where it can (see above); true where it
/// changed J or marked a counter in passing (ScalarEvolution keeps such a mark once it has seen it:
/// the caller then drops J's analyses).
bool uniform_inner_trips(Function &J, FunctionAnalysisManager &FAM) {
  LoopInfo &LI = FAM.getResult<LoopAnalysis>(J);
  ScalarEvolution &SE = FAM.getResult<ScalarEvolutionAnalysis>(J);
  DominatorTree &DT = FAM.getResult<DominatorTreeAnalysis>(J);
  BasicBlock &Entry = J.getEntryBlock();
  SmallVector<ThreadTrips, 4> Found;
  bool Touched = false;  // a counter marked, and unmarked
  bool Always = false;   // a thread loop whose inner loop counts alike in every thread already
  for (Loop *L : LI.getLoopsInPreorder()) {
    BasicBlock *Latch = L->getLoopLatch();
    // (LoopUnrollAndJam takes a loop with one inner loop)
    if (!Latch || !thread_loop_latch(*Latch->getTerminator()) || L->getSubLoops().size() != 1)
      continue;
    if (const SCEV *Count = SE.getBackedgeTakenCount(L->getSubLoops()[0]);
        !isa<SCEVCouldNotCompute>(Count) && SE.isLoopInvariant(Count, L)) {
      Always = true;
      continue;
    }
    PHINode *X = nullptr;
    for (PHINode &P : L->getHeader()->phis())
      if (P.getMetadata(kThreadX))
        X = &P;
    const auto *XRec = X ? dyn_cast<SCEVAddRecExpr>(SE.getSCEV(X)) : nullptr;
    if (!L->getLoopPreheader() || !L->getExitBlock())
      continue;
    if (!XRec || XRec->getLoop() != L || !XRec->isAffine() || !XRec->getStepRecurrence(SE)->isOne())
      continue;
    // A recurrence of L, where the thread's threadIdx.x is X: its value at iteration X - start.
    LoopToScevMapT AtX;
    AtX[L] = SE.getMinusSCEV(SE.getUnknown(X), XRec->getStart());
    auto at_x = [&](const SCEV *S) { return SCEVLoopAddRecRewriter::rewrite(S, AtX, SE); };
    for (Loop *Sub : L->getSubLoops()) {
      BasicBlock *SubLatch = Sub->getLoopLatch(), *Pre = Sub->getLoopPreheader();
      if (!SubLatch || !Pre || Sub->getExitingBlock() != SubLatch || !isa<BranchInst>(SubLatch->getTerminator()))
        continue;
      ThreadTrips T{L, Sub, X, SE.getBackedgeTakenCount(Sub), nullptr, true, nullptr, nullptr, ICmpInst::ICMP_EQ, {}};
      // A counter that might wrap, marked not to (where the check below finds it cannot).
      Counter &W = T.Wrap;
      if (isa<SCEVCouldNotCompute>(T.Count) && loop_counter(*Sub, SE, W)) {
        const bool Signed = CmpInst::isSigned(W.Pred);
        if (Signed ? W.Inc->hasNoSignedWrap() : W.Inc->hasNoUnsignedWrap()) {
          W.Inc = nullptr;  // (marked already, yet not counted)
        } else {
          Signed ? W.Inc->setHasNoSignedWrap(true) : W.Inc->setHasNoUnsignedWrap(true);
          Touched = true;
          SE.forgetLoop(Sub);
          T.Count = SE.getBackedgeTakenCount(Sub);
        }
      } else {
        W.Inc = nullptr;
      }
      auto take = [&] {
        if (isa<SCEVCouldNotCompute>(T.Count) || SE.isLoopInvariant(T.Count, L))
          return false;  // (alike already, where invariant)
        T.Count = at_x(T.Count);
        if (!known_on_entry(T.Count, X, Entry, SE))
          return false;
        if (W.Inc) {
          W.Start = at_x(W.Start), W.Step = at_x(W.Step), W.Bound = at_x(W.Bound);
          if (!known_on_entry(W.Start, X, Entry, SE) || !known_on_entry(W.Step, X, Entry, SE) || !known_on_entry(W.Bound, X, Entry, SE))
            return false;
        }
        if (BranchInst *G = Sub->getLoopGuardBranch()) {
          auto *Cmp = dyn_cast<ICmpInst>(G->getCondition());
          if (!Cmp || !SE.isSCEVable(Cmp->getOperand(0)->getType()) || !L->contains(G))
            return false;
          if (DT.dominates(G->getSuccessor(0), Pre))
            T.EnterOn = true;
          else if (DT.dominates(G->getSuccessor(1), Pre))
            T.EnterOn = false;
          else
            return false;
          T.Guard = G;
          T.Left = at_x(SE.getSCEV(Cmp->getOperand(0)));
          T.Right = at_x(SE.getSCEV(Cmp->getOperand(1)));
          T.Pred = Cmp->getPredicate();
          if (!known_on_entry(T.Left, X, Entry, SE) || !known_on_entry(T.Right, X, Entry, SE))
            return false;
        }
        return true;
      };
      if (take()) {
        Found.push_back(T);
      } else if (W.Inc) {  // not checked: not marked
        CmpInst::isSigned(W.Pred) ? W.Inc->setHasNoSignedWrap(false) : W.Inc->setHasNoUnsignedWrap(false);
        SE.forgetLoop(Sub);
      }
    }
  }
  if (Found.empty())
    return Touched;

  // Each thread loop concerned runs as it was where its flag says not every thread counts alike.
  SmallVector<Loop *, 4> Threads;
  for (const ThreadTrips &T : Found)
    if (!is_contained(Threads, T.L))
      Threads.push_back(T.L);
  for (Loop *L : Threads)
    formLCSSARecursively(*L, DT, &LI, &SE);

  // The check, between the entry block and the rest: a loop over threadIdx.x.
  Module &M = *J.getParent();
  LLVMContext &Ctx = J.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);
  BasicBlock *Rest = SplitBlock(&Entry, Entry.getTerminator(), &DT, &LI, nullptr, "gpulab.trips.rest");
  BasicBlock *Check = BasicBlock::Create(Ctx, "gpulab.trips.check", &J, Rest);
  BasicBlock *Done = BasicBlock::Create(Ctx, "gpulab.trips.done", &J, Rest);
  Entry.getTerminator()->setSuccessor(0, Check);
  IRBuilder<> EB(Entry.getTerminator());
  GlobalVariable *BlockDim = M.getNamedGlobal("blockDim");
  Value *Width = EB.CreateLoad(I32, EB.CreateConstInBoundsGEP2_32(BlockDim->getValueType(), BlockDim, 0, 0));
  IRBuilder<> CB(Check);
  PHINode *C = CB.CreatePHI(I32, 2, "gpulab.trips.x");
  C->addIncoming(CB.getInt32(0), &Entry);
  SmallVector<PHINode *, 4> Oks;
  SmallVector<Value *, 4> Alike;  // per thread loop: so far, every thread counts alike
  for (size_t K = 0; K < Threads.size(); ++K) {
    Oks.push_back(CB.CreatePHI(CB.getInt1Ty(), 2, "gpulab.trips.alike"));
    Oks.back()->addIncoming(CB.getTrue(), &Entry);
    Alike.push_back(Oks.back());
  }
  Value *Next = CB.CreateAdd(C, CB.getInt32(1), "", true, true);
  BranchInst *Back = CB.CreateCondBr(CB.getTrue(), Check, Done);
  BranchInst *Go = BranchInst::Create(Rest, Done);
  DT.recalculate(J);  // (the expander asks it where values may be reused)

  SCEVExpander Expander(SE, M.getDataLayout(), "gpulab.trips");
  SmallVector<Value *, 4> Counts;  // thread 0's, on entry
  IRBuilder<> IB(Back);
  for (const ThreadTrips &T : Found) {
    Value *&All = Alike[find(Threads, T.L) - Threads.begin()];
    ValueToSCEVMapTy At0{{T.X, SE.getZero(I32)}}, AtC{{T.X, SE.getUnknown(C)}};
    auto expand = [&](const SCEV *S, ValueToSCEVMapTy &Map, Instruction *Where) {
      const SCEV *E = SCEVParameterRewriter::rewrite(S, SE, Map);
      return Expander.expandCodeFor(E, E->getType(), Where);
    };
    Value *Count0 = new FreezeInst(expand(T.Count, At0, Entry.getTerminator()), "", Entry.getTerminator());
    Counts.push_back(Count0);
    All = IB.CreateAnd(All, IB.CreateICmpEQ(expand(T.Count, AtC, Back), Count0));
    if (T.Guard) {
      Value *Enters = IB.CreateICmp(T.Pred, expand(T.Left, AtC, Back), expand(T.Right, AtC, Back));
      All = IB.CreateAnd(All, T.EnterOn ? Enters : IB.CreateNot(Enters));
    }
    if (const Counter &W = T.Wrap; W.Inc) {  // its counter cannot wrap (see Counter)
      const bool Signed = CmpInst::isSigned(W.Pred);
      Value *Start = expand(W.Start, AtC, Back), *Step = expand(W.Step, AtC, Back), *Bound = expand(W.Bound, AtC, Back);
      Type *I64 = IB.getInt64Ty();
      auto wide = [&](Value *V) { return Signed ? IB.CreateSExt(V, I64) : IB.CreateZExt(V, I64); };
      const unsigned Bits = Step->getType()->getIntegerBitWidth();
      const APInt Max = Signed ? APInt::getSignedMaxValue(Bits).zext(64) : APInt::getMaxValue(Bits).zext(64);
      const bool Inclusive = W.Pred == ICmpInst::ICMP_SLE || W.Pred == ICmpInst::ICMP_ULE;
      Value *Last = IB.CreateAdd(wide(Bound), wide(Step));
      if (!Inclusive)
        Last = IB.CreateSub(Last, IB.getInt64(1));
      All = IB.CreateAnd(All, IB.CreateICmpSLE(Last, ConstantInt::get(I64, Max)));
      All = IB.CreateAnd(All, Signed ? IB.CreateICmpSGT(Step, ConstantInt::get(Step->getType(), 0))
                                     : IB.CreateICmpNE(Step, ConstantInt::get(Step->getType(), 0)));
      All = IB.CreateAnd(All, IB.CreateICmp(W.Pred, Start, Bound));
    }
  }
  // The block is counted as jammed where some thread loop with an inner loop is: one whose inner
  // loop counts alike in every block, or one whose threads count alike in this block.
  for (size_t K = 0; K < Threads.size(); ++K)
    Oks[K]->addIncoming(Alike[K], Check);
  Back->setCondition(IB.CreateICmpULT(Next, Width));
  C->addIncoming(Next, Check);
  // (frozen: a value the expander reused from the entry block may be poison where the kernel only
  // used it under a test; the flags are then false or true, never undefined)
  Value *Somewhere = ConstantInt::getBool(Ctx, Always);
  for (size_t K = 0; K < Threads.size(); ++K) {
    Alike[K] = new FreezeInst(Alike[K], "", Go);
    Somewhere = BinaryOperator::CreateOr(Somewhere, Alike[K], "", Go);
  }
  // Computed for threads that may not enter the loop, where what ScalarEvolution knew inside it
  // (no wrap, exact division) need not hold: no flag may make a value poison here.
  for (Instruction *I : Expander.getAllInsertedInstructions())
    I->dropPoisonGeneratingFlags();
  for (Instruction &I : make_early_inc_range(Entry))
    if (auto *Call = dyn_cast<CallInst>(&I); Call && Call->getCalledFunction() &&
                                             Call->getCalledFunction()->getName() == kJamBlock) {
      Call->moveBefore(Go);
      Call->setArgOperand(0, new ZExtInst(Somewhere, I32, "", Call));
    }

  for (size_t K = 0; K < Threads.size(); ++K) {
    SmallVector<std::pair<BinaryOperator *, bool>, 4> Marked;
    for (const ThreadTrips &T : Found)
      if (T.L == Threads[K] && T.Wrap.Inc)
        Marked.emplace_back(T.Wrap.Inc, CmpInst::isSigned(T.Wrap.Pred));
    version_loop(*Threads[K], Alike[K], Marked, LI, DT);
  }
  // In each thread loop (not its copy): each inner loop entered without its test, and counted
  // to thread 0's count.
  for (size_t K = 0; K < Found.size(); ++K) {
    const ThreadTrips &T = Found[K];
    if (T.Guard)
      T.Guard->setCondition(ConstantInt::getBool(Ctx, T.EnterOn));
    BasicBlock *Head = T.Sub->getHeader(), *SubLatch = T.Sub->getLoopLatch();
    Type *Ty = Counts[K]->getType();
    PHINode *Trip = PHINode::Create(Ty, 2, "gpulab.trip", &Head->front());
    auto *Br = cast<BranchInst>(SubLatch->getTerminator());
    IRBuilder<> LB(Br);
    Value *TripNext = LB.CreateAdd(Trip, ConstantInt::get(Ty, 1), "", true, false);
    Trip->addIncoming(ConstantInt::get(Ty, 0), T.Sub->getLoopPreheader());
    Trip->addIncoming(TripNext, SubLatch);
    Br->setCondition(Br->getSuccessor(0) == Head ? LB.CreateICmpNE(Trip, Counts[K]) : LB.CreateICmpEQ(Trip, Counts[K]));
  }
  return true;
}

// ---- region loops: block loops of kernels with barriers ------------------------------------
// A kernel whose only calls besides math are __syncthreads() runs, in the emulator, as phases:
// each thread in turn runs to its next barrier (or its return), then the next phase starts where
// the barrier was. K.gpulab_block does the same with one loop nest per phase: each cut at the
// barriers gives regions of the kernel (from its start, or from a barrier, to the next barrier
// or a return). A copy of the kernel's body, the thread function, takes the region to start and
// returns where it stopped (0: returned, k: at barrier k); the block function runs phase 0 for
// every thread, asks the runtime where the block goes next (gpulab_emu_block_phase_end, which
// reports a divergent barrier or a thread that returned before one, as the fibers would), and so
// on. What a thread keeps across a barrier lives in a per-thread slot of a context the runtime
// lends each block (gpulab_emu_block_scratch): its local arrays, and every value defined in one
// region and used in another; a value computed from nothing but the index variables and the
// parameters is computed again instead. The thread function is inlined into each phase's loop
// with its region a constant, so each loop is one region of the kernel.

/// Does F stop at a barrier or a warp collective (so that its block loop is a region loop)?
bool has_stop(const Function &F) {
  for (const Instruction &I : instructions(F))
    if (const auto *CB = dyn_cast<CallBase>(&I))
      if (plain_barrier(*CB) || warp_collective_call(*CB))
        return true;
  return false;
}

// ---- warp collectives in region loops ----
// A warp collective (gpulab::emu::warp_collective: __shfl*_sync, __ballot_sync, __any_sync,
// __all_sync, __syncwarp) is a stop like a barrier: the thread leaves its mask and value (and a
// shuffle's argument and width, the operands of the shuffle_source call that named its source) in
// slots of the context and returns; once every thread of the block has stopped there, the block
// function asks the runtime (gpulab_emu_block_collective) for each thread's answer, which the next
// region reads from another slot. The runtime groups lanes as the fibers do (the lanes of a warp
// that name one mask meet) and faults as they would, with their messages. This needs every
// thread of the block to stop at the same collective: only where the uniformity analysis finds
// each collective's block run alike by every thread of a phase (not under a branch on threadIdx,
// nor after an early return), else the kernel gets no block loop. warpSize, which nothing in the
// module writes, counts as alike (a shuffle loop's offsets are computed from it). The fibers'
// order is kept: the lane that completes a collective waits its turn (scheduler.cpp), so a phase
// after a collective starts at the thread the phase before it started at.

/// May V be computed again anywhere in its thread, with the same result? Constants, parameters,
/// values of the thread function's entry (which dominates everything), reads of the index
/// variables (never written in the kernel), and arithmetic of those.
bool recomputable(Value *V, const BasicBlock *Entry, const SmallPtrSetImpl<const Value *> &Index, int &Budget) {
  if (isa<Constant>(V) || isa<Argument>(V))
    return true;
  auto *I = dyn_cast<Instruction>(V);
  if (!I)
    return false;
  if (I->getParent() == Entry)
    return true;
  if (--Budget < 0)
    return false;
  if (auto *L = dyn_cast<LoadInst>(I)) {
    if (L->isVolatile() || !Index.count(getUnderlyingObject(L->getPointerOperand())))
      return false;
  } else if (!isa<BinaryOperator>(I) && !isa<CastInst>(I) && !isa<GetElementPtrInst>(I) && !isa<CmpInst>(I) &&
             !isa<SelectInst>(I)) {
    return false;
  }
  for (Value *Op : I->operands())
    if (!recomputable(Op, Entry, Index, Budget))
      return false;
  return true;
}

/// A copy of the recomputable V before At (its operands copied too, except the entry's values).
Value *recompute(Value *V, Instruction *At, const BasicBlock *Entry) {
  auto *I = dyn_cast<Instruction>(V);
  if (!I || I->getParent() == Entry)
    return V;
  Instruction *C = I->clone();
  for (unsigned i = 0; i < C->getNumOperands(); ++i)
    C->setOperand(i, recompute(C->getOperand(i), At, Entry));
  C->insertBefore(At);
  C->setName(I->getName() + ".again");
  return C;
}

/// Per-thread slots in the block's context: slot s of thread t at Ctx + n * Offset(s) + t * Stride(s)
/// (n the block's threads; the stride is the size rounded up to 16 bytes), every copy 16-byte
/// aligned.
struct Slots {
  Value *Ctx, *Lin, *N;  // (i8*, i64, i64), in the thread function's entry
  Instruction *At;       // where addresses are computed: the entry's end
  uint64_t Bytes = 0;    // per thread, a multiple of 16
  /// A new slot of type T: its address for this thread (and, in Offset, n * Offset is thread 0's).
  /// Each thread's copy of a local array (Array) is 16 bytes aligned, as the kernel's own code may
  /// assume (an array of 16 bytes or more is 16-aligned on x86-64, and its vector accesses say
  /// so); a value's copies are packed at its own alignment, so that a loop over the threads
  /// stores them with vector stores. Each slot's area (n copies) starts 16-aligned.
  Value *add(Type *T, const DataLayout &DL, const Twine &Name, uint64_t *Offset = nullptr, bool Array = false) {
    const uint64_t Size = DL.getTypeAllocSize(T).getFixedSize();
    if (Offset)
      *Offset = Bytes;
    const uint64_t Stride = alignTo(Size, Array ? Align(16) : DL.getABITypeAlign(T));
    IRBuilder<> IB(At);
    Value *Off = IB.CreateAdd(IB.CreateMul(N, IB.getInt64(Bytes)), IB.CreateMul(Lin, IB.getInt64(Stride)));
    Bytes += alignTo(Stride, 16);
    return IB.CreatePointerCast(IB.CreateInBoundsGEP(IB.getInt8Ty(), Ctx, Off), T->getPointerTo(), Name);
  }
};

/// Uniformity in the thread function T (after the cut at the barriers, before the values that
/// cross them are kept): which values every thread of a block computes alike, by LLVM's divergence
/// analysis, seeded with what differs between threads: threadIdx and the linear index, and every
/// read of memory but blockIdx, blockDim and gridDim (another thread may have written the
/// location in the same phase; the kernel's local arrays are per-thread slots). A value is held
/// alike at a barrier if it is uniform and defined in a block that every thread of a phase runs
/// equally often (not control dependent on a divergent branch), so that every thread defined it
/// the same number of times.
class Uniformity {
public:
  template <class Extra>
  Uniformity(Function &T, DominatorTree &DT, const SmallPtrSetImpl<const Value *> &Index, const Value *Tid,
             Extra extra, ArrayRef<Instruction *> KeptValues)
      : Kept(KeptValues.begin(), KeptValues.end()) {
    ReversePostOrderTraversal<Function *> RPOT(&T);
    LoopInfo LI(DT);
    if (containsIrreducibleCFG<const BasicBlock *>(RPOT, LI))
      return;  // (the analysis needs reducible control flow): nothing is held alike
    PostDominatorTree PDT(T);
    // A kept value not held alike is read from each thread's own slot after the barrier: what is
    // computed from that read differs between threads too, which the analysis (blind to the cut)
    // does not see. So such values are seeded as divergent and the analysis runs again, until
    // no kept value changes side.
    SmallPtrSet<const Instruction *, 16> Differing;
    for (;;) {
      analyse(T, DT, PDT, LI, Index, Tid, extra, Differing);
      bool Changed = false;
      for (const Instruction *V : Kept)
        if (!holds(*V))
          Changed |= Differing.insert(V).second;
      if (!Changed)
        break;
    }
    Reducible = true;
  }

private:
  template <class Extra>
  void analyse(Function &T, DominatorTree &DT, PostDominatorTree &PDT, LoopInfo &LI,
               const SmallPtrSetImpl<const Value *> &Index, const Value *Tid, Extra extra,
               const SmallPtrSetImpl<const Instruction *> &Differing) {
    Uneven.clear();
    Alike.clear();
    SyncDependenceAnalysis SDA(DT, PDT, LI);
    DivergenceAnalysisImpl DA(T, nullptr, DT, LI, SDA, false);
    for (unsigned i : {1u, 2u, 3u, 13u})
      DA.markDivergent(*extra(i));
    for (Instruction &I : instructions(T)) {
      bool Differs = isa<FreezeInst>(I) || isa<AllocaInst>(I) || isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I);
      if (auto *L = dyn_cast<LoadInst>(&I)) {
        const Value *Object = getUnderlyingObject(L->getPointerOperand());
        Differs = !Index.count(Object) || Object == Tid || L->isVolatile();
      } else if (I.mayReadFromMemory() && !isa<CallBase>(I)) {
        Differs = true;
      }
      if (Differs)
        DA.markDivergent(I);
    }
    for (const Instruction *V : Differing)
      DA.markDivergent(*V);
    DA.compute();
    // Blocks some threads of a phase run and others do not (or not as often): control dependent
    // on a divergent branch, or on any branch in such a block (from the post-dominator tree: each
    // block from a successor of the branch up to, not including, the branch's post-dominator).
    SmallVector<const BasicBlock *, 16> Splits;
    for (const BasicBlock &BB : T) {
      const Instruction *Term = BB.getTerminator();
      const Value *Cond = nullptr;
      if (const auto *Br = dyn_cast<BranchInst>(Term); Br && Br->isConditional())
        Cond = Br->getCondition();
      else if (const auto *Sw = dyn_cast<SwitchInst>(Term))
        Cond = Sw->getCondition();
      if (Cond && DA.isDivergent(*Cond))
        Splits.push_back(&BB);
    }
    while (!Splits.empty()) {
      const BasicBlock *Split = Splits.pop_back_val();
      const DomTreeNode *Node = PDT.getNode(Split);
      const DomTreeNode *Join = Node ? Node->getIDom() : nullptr;
      for (const BasicBlock *Succ : successors(Split)) {
        const DomTreeNode *N = PDT.getNode(Succ);
        if (!N || !Join) {  // (no post-dominator: a path that never returns) all of it, to be sure
          mark_uneven_from(Succ, Splits);
          continue;
        }
        for (; N && N != Join && N->getBlock(); N = N->getIDom())
          mark_uneven(N->getBlock(), Splits);
      }
    }
    for (Instruction &I : instructions(T))
      if (!DA.isDivergent(I) && !Uneven.count(I.getParent()))
        Alike.insert(&I);
  }

public:
  /// Does every thread of a phase run BB equally often? (Not known: no.)
  bool uneven(const BasicBlock *BB) const { return !Reducible || Uneven.count(BB) > 0; }
  bool holds(const Instruction &I) const { return Alike.count(&I) > 0; }

private:
  void mark_uneven(const BasicBlock *BB, SmallVectorImpl<const BasicBlock *> &Splits) {
    if (!Uneven.insert(BB).second)
      return;
    const Instruction *Term = BB->getTerminator();
    if (Term->getNumSuccessors() > 1)  // a branch among threads already split
      Splits.push_back(BB);
  }
  void mark_uneven_from(const BasicBlock *BB, SmallVectorImpl<const BasicBlock *> &Splits) {
    SmallVector<const BasicBlock *, 16> Work{BB};
    while (!Work.empty()) {
      const BasicBlock *B = Work.pop_back_val();
      if (Uneven.count(B))
        continue;
      mark_uneven(B, Splits);
      append_range(Work, successors(B));
    }
  }
  bool Reducible = false;
  SmallVector<const Instruction *, 16> Kept;  // the values kept across a barrier
  SmallPtrSet<const BasicBlock *, 16> Uneven;
  SmallPtrSet<const Instruction *, 32> Alike;
};

/// The block function of a kernel with barriers (see above), or null.
/// With Wide, a copy whose index sums are marked as not wrapping (index_sums_without_wrap; the
/// sums found in *Wide), or none if it finds no such sum.
Function *make_region_loop(Function &F, SmallVector<IndexSum, 4> *Wide = nullptr) {
  Module &M = *F.getParent();
  LLVMContext &Ctx = M.getContext();
  const DataLayout &DL = M.getDataLayout();
  Type *I32 = Type::getInt32Ty(Ctx), *I64 = Type::getInt64Ty(Ctx), *I8Ptr = Type::getInt8PtrTy(Ctx);
  StructType *Uint3 = nullptr;
  GlobalVariable *Vars[4];
  if (!kernel_index_variables(F, Vars, Uint3))
    return nullptr;
  for (const Argument &A : F.args())
    if (A.hasByValAttr() || A.hasInAllocaAttr() || A.hasPreallocatedAttr())
      return nullptr;  // (a thread's own copy would have to live across barriers too)

  // The thread function: F's parameters, then the region to run, the thread's index, blockIdx,
  // blockDim and gridDim (three each), the thread's linear index, the block's size, the context.
  const unsigned NF = F.arg_size();
  SmallVector<Type *, 24> Params(F.getFunctionType()->params().begin(), F.getFunctionType()->params().end());
  Params.append(15, I32);
  Params.append({I8Ptr, I8Ptr});
  Function *T = Function::Create(FunctionType::get(I32, Params, false), GlobalValue::InternalLinkage,
                                 F.getAddressSpace(), F.getName() + ".gpulab_thread", &M);
  ValueToValueMapTy VMap;
  SmallVector<ReturnInst *, 8> Returns;
  clone_body(F, *T, VMap, Returns);
  auto give_up = [&]() -> Function * {
    T->eraseFromParent();
    return nullptr;
  };
  T->removeFnAttr(Attribute::NoInline);
  T->removeFnAttr(Attribute::OptimizeNone);
  T->addFnAttr(Attribute::AlwaysInline);
  forget_one_thread_facts(*T);
  dynamic_shared_is_constant(*T);
  // After F's parameters: [0] the region, [1..12] threadIdx, blockIdx, blockDim, gridDim,
  // [13] the linear thread index, [14] the block's size, [15] the context, [16] the phase's
  // snapshot of the values every thread of the block holds alike.
  auto extra = [&](unsigned i) -> Value * { return T->getArg(NF + i); };

  BasicBlock *Body = &T->getEntryBlock();
  BasicBlock *Entry = BasicBlock::Create(Ctx, "gpulab.thread", T, Body);
  IRBuilder<> IB(Entry);
  SmallPtrSet<Instruction *, 16> Own;
  SmallPtrSet<const Value *, 4> Index;
  AllocaInst *Local[4];
  for (int k = 0; k < 4; ++k) {
    Local[k] = IB.CreateAlloca(Uint3, nullptr, std::string("gpulab.") + kIndexVars[k]);
    Local[k]->setMetadata(kIndexLocal, MDNode::get(Ctx, MDString::get(Ctx, kIndexVars[k])));
    Index.insert(Local[k]);
  }
  for (int k = 0; k < 4; ++k)
    replace_in_function(*T, Vars[k], Local[k]);
  for (int k = 0; k < 4; ++k)
    for (unsigned i = 0; i < 3; ++i) {
      auto *GEP = cast<Instruction>(IB.CreateStructGEP(Uint3, Local[k], i));
      Own.insert(GEP);
      Own.insert(IB.CreateStore(extra(1 + 3 * k + i), GEP));
    }
  for (int k = 0; k < 4; ++k)
    if (!only_read(Local[k], Own))
      return give_up();
  // warpSize, where nothing writes it, is the same for every thread (a lane's index and the
  // offsets of a shuffle loop are computed from it).
  if (GlobalVariable *WS = M.getNamedGlobal("warpSize"); WS && WS->getValueType()->isIntegerTy(32) && only_read(WS, Own))
    Index.insert(WS);
  if (Wide && (*Wide = index_sums_without_wrap(*T)).empty())
    return give_up();
  for (ReturnInst *R : Returns) {
    ReturnInst::Create(Ctx, ConstantInt::get(I32, 0), R);
    R->eraseFromParent();
  }

  // Cut at the barriers and warp collectives: each ends its region with `return k`; region k
  // starts after it.
  struct Cut {
    CallBase *CB;
    bool Collective;
    uint64_t Op;  // a collective's kind, as the runtime is told it
    Value *Arg, *Width;
  };
  SmallVector<Cut, 8> Cuts;
  for (Instruction &I : instructions(*T))
    if (auto *CB = dyn_cast<CallBase>(&I)) {
      Cut C{CB, false, 0, nullptr, nullptr};
      if (plain_barrier(*CB) || (C.Collective = warp_collective_call(*CB, &C.Op, &C.Arg, &C.Width)))
        Cuts.push_back(C);
    }
  SmallVector<std::pair<std::string, uint64_t>, 8> Places;
  SmallVector<Constant *, 8> Files;
  for (const Cut &C : Cuts) {
    StringRef File;
    uint64_t Line = 0;
    if (C.Collective)
      warp_collective_call(*C.CB, nullptr, nullptr, nullptr, &File, &Line);
    else
      plain_barrier(*C.CB, &File, &Line);
    Places.emplace_back(File.str(), Line);
    Files.push_back(cast<Constant>(C.CB->getArgOperand(C.Collective ? 4 : 2)));
  }
  SwitchInst *Dispatch = IB.CreateSwitch(extra(0), Body, Cuts.size());
  // Per-thread slots of the context (see Slots), from here on.
  Slots S;
  S.At = Dispatch;
  S.Ctx = extra(15);
  {
    IRBuilder<> AtEnd(Dispatch);
    S.Lin = AtEnd.CreateZExt(extra(13), I64);
    S.N = AtEnd.CreateZExt(extra(14), I64);
  }
  // A thread stopped at a warp collective leaves its mask, value and a shuffle's argument and
  // width in slots; the runtime puts what the collective returns to it in another.
  enum { kMask, kValue, kArg, kWidth, kResult, kWarpSlots };
  Value *Warp[kWarpSlots] = {};
  uint64_t WarpAt[kWarpSlots] = {};
  if (any_of(Cuts, [](const Cut &C) { return C.Collective; }))
    for (int i = 0; i < kWarpSlots; ++i)
      Warp[i] = S.add(i == kArg || i == kWidth ? I32 : I64, DL, "gpulab.warp", &WarpAt[i]);
  SmallVector<BasicBlock *, 8> Stops;  // the block that ends at stop k + 1
  for (size_t k = 0; k < Cuts.size(); ++k) {
    CallBase *CB = Cuts[k].CB;
    BasicBlock *BB = CB->getParent();
    BasicBlock *Cont = SplitBlock(BB, CB->getNextNode());
    BB->getTerminator()->eraseFromParent();
    if (Cuts[k].Collective) {
      IRBuilder<> Leave(BB);
      Leave.CreateStore(CB->getArgOperand(1), Warp[kMask]);
      Leave.CreateStore(CB->getArgOperand(2), Warp[kValue]);
      Leave.CreateStore(Cuts[k].Arg, Warp[kArg]);
      Leave.CreateStore(Cuts[k].Width, Warp[kWidth]);
      CB->replaceAllUsesWith(new LoadInst(I64, Warp[kResult], "gpulab.warp.got", &*Cont->getFirstInsertionPt()));
      Value *Source = CB->getArgOperand(3);
      CB->eraseFromParent();
      if (auto *SS = dyn_cast<CallInst>(Source); SS && SS->use_empty())
        SS->eraseFromParent();
    } else {
      CB->replaceAllUsesWith(ConstantInt::get(CB->getType(), 0));  // a plain barrier's value
      CB->eraseFromParent();
    }
    ReturnInst::Create(Ctx, ConstantInt::get(I32, k + 1), BB);
    Stops.push_back(BB);
    Dispatch->addCase(ConstantInt::get(cast<IntegerType>(I32), k + 1), Cont);
  }

  // The kernel's local arrays, each thread's own across barriers: slots of the context.
  SmallVector<AllocaInst *, 8> Allocas;
  for (Instruction &I : instructions(*T))
    if (auto *AI = dyn_cast<AllocaInst>(&I))
      if (!Index.count(AI))
        Allocas.push_back(AI);
  for (AllocaInst *AI : Allocas) {
    const auto *Count = dyn_cast<ConstantInt>(AI->getArraySize());
    if (!Count || AI->getAlign().value() > 16)
      return give_up();
    // (Lifetime markers describe a stack object; a slot is a part of the context.)
    SmallVector<Instruction *, 8> Markers;
    for (User *U : AI->users()) {
      if (auto *II = dyn_cast<IntrinsicInst>(U); II && II->isLifetimeStartOrEnd())
        Markers.push_back(II);
      else if (isa<BitCastInst>(U))
        for (User *V : U->users())
          if (auto *II = dyn_cast<IntrinsicInst>(V); II && II->isLifetimeStartOrEnd())
            Markers.push_back(II);
    }
    for (Instruction *Marker : Markers)
      Marker->eraseFromParent();
    Type *Ty = ArrayType::get(AI->getAllocatedType(), Count->getZExtValue());
    Value *P = S.add(Ty, DL, AI->getName() + ".slot", nullptr, true);
    AI->replaceAllUsesWith(IRBuilder<>(Dispatch).CreatePointerCast(P, AI->getType()));
    AI->eraseFromParent();
  }

  // Values defined in one region and used in another: computed again, or kept in a slot.
  DominatorTree DT(*T);
  SmallVector<std::pair<Instruction *, Use *>, 32> Far;
  for (Instruction &I : instructions(*T)) {
    if (I.getParent() == Entry)
      continue;
    for (Use &U : I.uses())
      if (!DT.dominates(&I, U))
        Far.emplace_back(&I, &U);
  }
  // Which of them every thread holds alike (uniform: computed from uniform values only, where
  // every thread of the block goes the same way). Those a thread cannot have redefined in the
  // same phase before the use are read from the phase's snapshot (the value thread 0 held when
  // the phase began, the block function's copy): one value for the whole phase, which the loop
  // passes may then treat as an invariant of the loop over the threads.
  SmallVector<Instruction *, 16> KeptValues;
  for (auto &[I, U] : Far)
    if (KeptValues.empty() || KeptValues.back() != I)
      KeptValues.push_back(I);
  const Uniformity Alike(*T, DT, Index, Local[0], extra, KeptValues);
  // Barriers at one place (a loop unrolled around one, or a helper inlined twice): the emulator
  // takes them for one. Each thread's next phase starts where it stopped, so the threads must
  // stop at the same one: no block function where some threads may reach one and the rest another.
  for (size_t k = 0; k < Cuts.size(); ++k)
    for (size_t j = k + 1; j < Cuts.size(); ++j)
      if (Places[k] == Places[j] && (Alike.uneven(Stops[k]) || Alike.uneven(Stops[j])))
        return give_up();
  // A warp collective only where every thread of the block reaches it alike (see "warp
  // collectives in region loops"): then they all stop there together.
  for (size_t k = 0; k < Cuts.size(); ++k)
    if (Cuts[k].Collective && Alike.uneven(Stops[k]))
      return give_up();
  struct Snapshot {
    Type *Ty;
    uint64_t Slot, At;  // thread 0's slot (n * Slot), and the offset in the snapshot
  };
  SmallVector<Snapshot, 8> Snapshots;
  uint64_t SnapshotBytes = 0;
  DenseMap<Instruction *, Value *> Slot, Snapped;
  DenseMap<std::pair<Value *, Instruction *>, Value *> Reads;  // what a use at a place reads
  for (auto &[I, U] : Far) {
    auto *User = cast<Instruction>(U->getUser());
    Instruction *At = User;
    if (auto *Phi = dyn_cast<PHINode>(User))
      At = Phi->getIncomingBlock(*U)->getTerminator();
    int Budget = 24;
    if (recomputable(I, Entry, Index, Budget)) {
      Value *&Again = Reads[{I, At}];
      if (!Again)
        Again = recompute(I, At, Entry);
      U->set(Again);
      continue;
    }
    Value *&P = Slot[I];
    uint64_t Offset = 0;
    if (!P) {
      P = S.add(I->getType(), DL, I->getName() + ".slot", &Offset);
      Instruction *After = I->getParent()->getFirstNonPHI();
      if (!isa<PHINode>(I))
        After = I->getNextNode();
      new StoreInst(I, P, After);
      if (Alike.holds(*I)) {
        Snapshots.push_back({I->getType(), Offset, SnapshotBytes});
        Snapped[I] = IRBuilder<>(Dispatch).CreatePointerCast(
            IRBuilder<>(Dispatch).CreateConstInBoundsGEP1_64(Type::getInt8Ty(Ctx), extra(16), SnapshotBytes),
            I->getType()->getPointerTo(), I->getName() + ".snapshot");
        SnapshotBytes += alignTo(DL.getTypeAllocSize(I->getType()).getFixedSize(), 16);
      }
    }
    Value *From = P;
    if (Value *Snap = Snapped.lookup(I))
      if (!isPotentiallyReachable(I, At, nullptr, &DT))
        From = Snap;
    // (One read per place: a phi may take the same value twice from one block.)
    Value *&Read = Reads[{From, At}];
    if (!Read)
      Read = new LoadInst(I->getType(), From, I->getName() + ".kept", At);
    U->set(Read);
  }
  if (verifyFunction(*T))
    return give_up();

  // The block function: phase after phase, each a loop over the block's threads.
  Function *B = Function::Create(F.getFunctionType(), GlobalValue::InternalLinkage, F.getAddressSpace(),
                                 F.getName() + kBlockSuffix, &M);
  for (const Attribute &A : F.getAttributes().getFnAttrs())  // the kernel's code-generation settings
    B->addFnAttr(A);
  B->removeFnAttr(Attribute::NoInline);
  B->removeFnAttr(Attribute::OptimizeNone);
  B->addFnAttr(Attribute::NoSanitizeCoverage);
  B->addFnAttr(Attribute::NoUnwind);
  BasicBlock *BEntry = BasicBlock::Create(Ctx, "gpulab.entry", B);
  BasicBlock *Exit = BasicBlock::Create(Ctx, "gpulab.exit", B);
  IRBuilder<> EB(BEntry);
  Value *Idx[9];
  for (int k = 1; k < 4; ++k)
    for (unsigned i = 0; i < 3; ++i)
      Idx[3 * (k - 1) + i] = EB.CreateLoad(I32, EB.CreateStructGEP(Uint3, Vars[k], i));
  Value *Dim[3] = {Idx[3], Idx[4], Idx[5]};
  Value *N = EB.CreateMul(EB.CreateMul(Dim[0], Dim[1]), Dim[2], "gpulab.n");
  Value *N64 = EB.CreateZExt(N, I64);
  FunctionCallee Scratch = M.getOrInsertFunction(gpulab::emu::pass_abi::block_scratch, FunctionType::get(I8Ptr, {I64}, false));
  CallInst *Context = EB.CreateCall(Scratch, {EB.CreateMul(N64, EB.getInt64(S.Bytes + 4))}, "gpulab.context");
  Context->addRetAttr(Attribute::NoAlias);  // a buffer of the block's own, like malloc's
  if (auto *SF = dyn_cast<Function>(Scratch.getCallee()))
    SF->addRetAttr(Attribute::NoAlias);
  Value *States = EB.CreatePointerCast(EB.CreateInBoundsGEP(EB.getInt8Ty(), Context, EB.CreateMul(N64, EB.getInt64(S.Bytes))),
                                       I32->getPointerTo(), "gpulab.states");
  // Where each barrier is, for the runtime's messages: {file, line}, from 1.
  StructType *PlaceTy = StructType::get(I8Ptr, I32);
  SmallVector<Constant *, 8> Rows{ConstantStruct::get(PlaceTy, {ConstantPointerNull::get(cast<PointerType>(I8Ptr)), ConstantInt::get(I32, 0)})};
  for (size_t k = 0; k < Places.size(); ++k)
    Rows.push_back(ConstantStruct::get(PlaceTy, {ConstantExpr::getPointerCast(Files[k], I8Ptr),
                                                 ConstantInt::get(I32, Places[k].second)}));
  auto *PlacesTy = ArrayType::get(PlaceTy, Rows.size());
  auto *PlaceTable = new GlobalVariable(M, PlacesTy, true, GlobalValue::PrivateLinkage,
                                        ConstantArray::get(PlacesTy, Rows), F.getName() + ".gpulab_barriers");
  FunctionCallee PhaseEnd = M.getOrInsertFunction(
      gpulab::emu::pass_abi::block_phase_end, FunctionType::get(I32, {I32->getPointerTo(), I32, I32, I8Ptr}, false));

  // The order of the threads in each phase, as the fibers run them: the thread that completes a
  // barrier (the last to arrive) goes on at once, to its next stop, and the scheduler's next
  // pass starts from thread 0. So after p barriers the phase starts at thread (n - p) mod n and
  // wraps around: the threads [r, n), then [0, r). The lane that completes a warp collective waits
  // its turn (scheduler.cpp, warp_collective), so the phase after one starts where the phase
  // before it did. (Race-free kernels compute the same in any order; this keeps a racy one's
  // result, and the order of its atomics, the same with and without block loops.)
  auto *SnapshotArea = EB.CreateAlloca(ArrayType::get(EB.getInt8Ty(), std::max<uint64_t>(SnapshotBytes, 16)), nullptr,
                                       "gpulab.snapshot");
  SnapshotArea->setAlignment(Align(16));
  Value *SnapshotBase = EB.CreatePointerCast(SnapshotArea, I8Ptr);
  AllocaInst *Passed = EB.CreateAlloca(I32, nullptr, "gpulab.passed");
  EB.CreateStore(EB.getInt32(0), Passed);
  // Where the phase's threads stopped, OR-ed and AND-ed together: equal when they all stopped at
  // the same place (the runtime is asked only when they are not).
  AllocaInst *Any = EB.CreateAlloca(I32, nullptr, "gpulab.stops.or");
  AllocaInst *All = EB.CreateAlloca(I32, nullptr, "gpulab.stops.and");
  AllocaInst *FirstOfPhase = EB.CreateAlloca(I32, nullptr, "gpulab.first.slot");
  SmallVector<BasicBlock *, 8> Starts;
  for (size_t k = 0; k <= Cuts.size(); ++k)
    Starts.push_back(BasicBlock::Create(Ctx, "gpulab.phase" + Twine(k), B, Exit));
  EB.CreateBr(Starts[0]);
  // Into phase j from stop j: past a barrier, one more barrier passed; past a warp collective, the
  // runtime's answer to each thread first (gpulab_emu_block_collective; the block ends on a fault).
  FunctionCallee Collective = M.getOrInsertFunction(
      gpulab::emu::pass_abi::block_collective,
      FunctionType::get(I32, {I32, I8Ptr, I8Ptr, I8Ptr, I8Ptr, I8Ptr, I32, I32, I8Ptr, I32}, false));
  SmallVector<BasicBlock *, 8> Into{nullptr};
  for (size_t j = 1; j <= Cuts.size(); ++j) {
    BasicBlock *In = BasicBlock::Create(Ctx, "gpulab.into" + Twine(j), B, Starts[j]);
    IRBuilder<> I(In);
    if (!Cuts[j - 1].Collective) {
      I.CreateStore(I.CreateAdd(I.CreateLoad(I32, Passed), I.getInt32(1)), Passed);
      I.CreateBr(Starts[j]);
    } else {
      SmallVector<Value *, 10> Args{I.getInt32(Cuts[j - 1].Op)};
      for (int i = 0; i < kWarpSlots; ++i)
        Args.push_back(I.CreateInBoundsGEP(I.getInt8Ty(), Context, I.CreateMul(N64, I.getInt64(WarpAt[i]))));
      Args.append({N, I.CreateLoad(I32, FirstOfPhase), ConstantExpr::getPointerCast(Files[j - 1], I8Ptr),
                   I.getInt32(Places[j - 1].second)});
      Value *Ok = I.CreateCall(Collective, Args);
      I.CreateCondBr(I.CreateICmpNE(Ok, I.getInt32(0)), Starts[j], Exit);
    }
    Into.push_back(In);
  }
  for (size_t k = 0; k <= Cuts.size(); ++k) {
    const std::string Name = ("gpulab.phase" + Twine(k)).str();
    IRBuilder<> P(Starts[k]);
    Value *Count = P.CreateLoad(I32, Passed);
    for (const Snapshot &V : Snapshots) {  // thread 0's value (every thread's) as the phase begins
      Value *Thread0 = P.CreateInBoundsGEP(P.getInt8Ty(), Context, P.CreateMul(N64, P.getInt64(V.Slot)));
      Value *Held = P.CreateLoad(V.Ty, P.CreatePointerCast(Thread0, V.Ty->getPointerTo()));
      P.CreateStore(Held, P.CreatePointerCast(P.CreateConstInBoundsGEP1_64(P.getInt8Ty(), SnapshotBase, V.At),
                                              V.Ty->getPointerTo()));
    }
    P.CreateStore(P.getInt32(0), Any);
    P.CreateStore(P.getInt32(-1), All);
    Value *First = k == 0 ? P.getInt32(0) : P.CreateURem(P.CreateSub(N, P.CreateURem(Count, N)), N, "gpulab.first");
    P.CreateStore(First, FirstOfPhase);
    BasicBlock *After = BasicBlock::Create(Ctx, Name + ".end", B, Exit);
    auto run_threads = [&](BasicBlock *Pre, Value *Lo, Value *Hi, BasicBlock *Out) {
      // (phase 0 runs the whole block from thread 0: rows of one count, which a jam copy needs)
      const ThreadRange R = thread_range(*B, Pre, Dim, Lo, Hi, Out, Name, k == 0);
      IRBuilder<> H(R.XHead);
      SmallVector<Value *, 24> Args;
      for (Argument &A : B->args())
        Args.push_back(&A);
      Args.push_back(ConstantInt::get(I32, k));
      Args.append({R.X, R.Y, R.Z});
      Args.append(Idx, Idx + 9);
      Args.append({R.Lin, N, Context, SnapshotBase});
      Value *Stop = H.CreateCall(T, Args);
      H.CreateStore(Stop, H.CreateInBoundsGEP(I32, States, H.CreateZExt(R.Lin, I64)));
      H.CreateStore(H.CreateOr(H.CreateLoad(I32, Any), Stop), Any);
      H.CreateStore(H.CreateAnd(H.CreateLoad(I32, All), Stop), All);
      H.CreateBr(R.XLatch);
    };
    if (k == 0) {
      run_threads(Starts[k], First, N, After);
    } else {
      BasicBlock *Wrap = BasicBlock::Create(Ctx, Name + ".wrap", B, Exit);
      run_threads(Starts[k], First, N, Wrap);
      run_threads(Wrap, P.getInt32(0), First, After);
    }
    IRBuilder<> A(After);
    Value *Or = A.CreateLoad(I32, Any), *And = A.CreateLoad(I32, All);
    BasicBlock *Disagree = BasicBlock::Create(Ctx, Name + ".disagree", B, Exit);
    BasicBlock *Go = BasicBlock::Create(Ctx, Name + ".go", B, Exit);
    A.CreateCondBr(A.CreateICmpEQ(Or, And), Go, Disagree);
    IRBuilder<> D(Disagree);
    Value *Said = D.CreateCall(PhaseEnd, {States, N, First, D.CreatePointerCast(PlaceTable, I8Ptr)});
    D.CreateBr(Go);
    IRBuilder<> G(Go);
    PHINode *Next = G.CreatePHI(I32, 2, "gpulab.next");
    Next->addIncoming(Or, After);
    Next->addIncoming(Said, Disagree);
    SwitchInst *To = G.CreateSwitch(Next, Exit, Cuts.size());
    for (size_t j = 1; j <= Cuts.size(); ++j)
      To->addCase(ConstantInt::get(cast<IntegerType>(I32), j), Into[j]);
  }
  ReturnInst::Create(Ctx, Exit);

  SmallVector<CallBase *, 8> Calls;
  for (User *U : T->users())
    Calls.push_back(cast<CallBase>(U));
  for (CallBase *CB : Calls) {
    InlineFunctionInfo IFI;
    if (!InlineFunction(*CB, IFI).isSuccess()) {
      B->eraseFromParent();
      return give_up();
    }
  }
  T->eraseFromParent();
  return B;
}

/// The comparisons a branch condition is made of: the condition itself, or the operands of the
/// and/or (also as select: `a && b` is select a, b, false) it is, recursively.
void guard_leaves(Use &U, SmallVectorImpl<Use *> &Leaves, int Depth) {
  Value *V = U.get();
  if (isa<ICmpInst>(V)) {
    Leaves.push_back(&U);
    return;
  }
  auto *I = dyn_cast<Instruction>(V);
  if (!I || !I->getType()->isIntegerTy(1) || !I->hasOneUse() || Depth > 8)
    return;
  if (I->getOpcode() == Instruction::And || I->getOpcode() == Instruction::Or) {
    for (Use &Op : I->operands())
      guard_leaves(Op, Leaves, Depth + 1);
  } else if (auto *S = dyn_cast<SelectInst>(I)) {
    const auto *T = dyn_cast<ConstantInt>(S->getTrueValue()), *F = dyn_cast<ConstantInt>(S->getFalseValue());
    if (F && F->isZero()) {  // c && x
      guard_leaves(S->getOperandUse(0), Leaves, Depth + 1);
      guard_leaves(S->getOperandUse(1), Leaves, Depth + 1);
    } else if (T && T->isOne()) {  // c || x
      guard_leaves(S->getOperandUse(0), Leaves, Depth + 1);
      guard_leaves(S->getOperandUse(2), Leaves, Depth + 1);
    }
  }
}

/// Guards that hold (or fail) for a whole loop, made visible to the loop passes.
///
/// A thread-per-element kernel guards its work with `if (i < n)`, i = blockIdx.x * blockDim.x +
/// threadIdx.x: in the block loop an affine function of the x loop's counter, compared with a
/// number the loop does not change. The store under that guard is conditional, and a conditional
/// store does not vectorise (SSE2 has no masked store). Yet in every block but the last the guard
/// holds for all the block's threads. For each such comparison (signed or unsigned <, <=, >, >=
/// of {S,+,C} with an invariant, C a constant), this computes before the loop, in 64 bits,
/// whether the sequence stays within the comparison's 32- or 64-bit range for the whole loop (so
/// the values are exactly linear, and the comparison monotone in the counter) and whether it
/// holds at the first and at the last iteration: then it holds at every one (AllTrue), or fails
/// at every one (AllFalse). The branch's condition becomes AllTrue | (cond & !AllFalse), equal to
/// cond whatever the flags (they are set only when cond is known), and loop unswitching then
/// gives the loop a copy in which the guard is a constant.
bool expose_guard(Use &U, Loop &L, const SCEV *Trips, ScalarEvolution &SE, const DataLayout &DL) {
  auto *Cmp = cast<ICmpInst>(U.get());
  Type *Ty = Cmp->getOperand(0)->getType();
  if (Cmp->isEquality() || !Ty->isIntegerTy() || Ty->getIntegerBitWidth() > 64)
    return false;
  const unsigned Bits = Ty->getIntegerBitWidth();
  ICmpInst::Predicate Pred = Cmp->getPredicate();
  const SCEV *Lhs = SE.getSCEV(Cmp->getOperand(0)), *Rhs = SE.getSCEV(Cmp->getOperand(1));
  if (!SE.isLoopInvariant(Rhs, &L)) {
    std::swap(Lhs, Rhs);
    Pred = ICmpInst::getSwappedPredicate(Pred);
  }
  const auto *AR = dyn_cast<SCEVAddRecExpr>(Lhs);
  if (!AR || AR->getLoop() != &L || !AR->isAffine() || !SE.isLoopInvariant(Rhs, &L) ||
      !isa<SCEVConstant>(AR->getStepRecurrence(SE)))
    return false;
  const int64_t Step = cast<SCEVConstant>(AR->getStepRecurrence(SE))->getAPInt().getSExtValue();
  if (Step > (1 << 20) || Step < -(1 << 20))
    return false;
  Instruction *At = L.getLoopPreheader()->getTerminator();
  if (!isSafeToExpandAt(AR->getStart(), At, SE) || !isSafeToExpandAt(Rhs, At, SE) || !isSafeToExpandAt(Trips, At, SE))
    return false;
  SCEVExpander Expander(SE, DL, "gpulab.guard");
  IRBuilder<> IB(At);
  // The last iteration's value in twice the counter's bits (64 for a 32-bit counter, 128 for a
  // 64-bit one, as a jam copy's widened indices are): exact, the trips below 2^32 and |step| at
  // most 2^20.
  const unsigned WideBits = Bits <= 32 ? 64 : 128;
  Type *Wide = IB.getIntNTy(WideBits);
  Value *Start = Expander.expandCodeFor(AR->getStart(), Ty, At);
  Value *Bound = Expander.expandCodeFor(Rhs, Ty, At);
  Value *N = IB.CreateZExtOrTrunc(Expander.expandCodeFor(Trips, Trips->getType(), At), Wide);
  const bool Signed = ICmpInst::isSigned(Pred);
  Value *StartW = Signed ? IB.CreateSExt(Start, Wide) : IB.CreateZExt(Start, Wide);
  Value *LastW = IB.CreateAdd(StartW, IB.CreateMul(N, ConstantInt::get(Wide, APInt(WideBits, static_cast<uint64_t>(Step), true))));
  const APInt Lo = Signed ? APInt::getSignedMinValue(Bits).sext(WideBits) : APInt::getMinValue(WideBits);
  const APInt Hi = Signed ? APInt::getSignedMaxValue(Bits).sext(WideBits) : APInt::getMaxValue(Bits).zext(WideBits);
  Value *InRange = IB.CreateAnd(IB.CreateICmpULT(N, ConstantInt::get(Wide, 1ull << 32)),
                                IB.CreateAnd(IB.CreateICmpSGE(LastW, ConstantInt::get(Wide, Lo)),
                                             IB.CreateICmpSLE(LastW, ConstantInt::get(Wide, Hi))));
  Value *First = IB.CreateICmp(Pred, Start, Bound);
  Value *AtLast = IB.CreateICmp(Pred, IB.CreateTrunc(LastW, Ty), Bound);
  // Frozen: a start computed before the loop with a no-wrap flag of the kernel's own arithmetic
  // could be poison where the kernel's signed arithmetic overflows (undefined in C++ anyway); a
  // branch on poison would be undefined in any case.
  Value *AllTrue = IB.CreateFreeze(IB.CreateAnd(InRange, IB.CreateAnd(First, AtLast)), "gpulab.guard.true");
  Value *AllFalse =
      IB.CreateFreeze(IB.CreateAnd(InRange, IB.CreateNot(IB.CreateOr(First, AtLast))), "gpulab.guard.false");
  IRBuilder<> AtUser(cast<Instruction>(U.getUser()));
  U.set(AtUser.CreateOr(AllTrue, AtUser.CreateAnd(Cmp, AtUser.CreateNot(AllFalse))));
  return true;
}

bool expose_uniform_guards(Function &B, FunctionAnalysisManager &FAM) {
  LoopInfo &LI = FAM.getResult<LoopAnalysis>(B);
  ScalarEvolution &SE = FAM.getResult<ScalarEvolutionAnalysis>(B);
  const DataLayout &DL = B.getParent()->getDataLayout();
  bool Changed = false;
  for (Loop *L : LI.getLoopsInPreorder()) {
    const SCEV *Trips = SE.getBackedgeTakenCount(L);
    if (!L->getLoopPreheader() || isa<SCEVCouldNotCompute>(Trips) || Trips->getType()->getIntegerBitWidth() > 64)
      continue;
    for (BasicBlock *BB : L->blocks()) {
      auto *Br = dyn_cast<BranchInst>(BB->getTerminator());
      if (!Br || !Br->isConditional() || LI.getLoopFor(BB) != L || L->isLoopExiting(BB))
        continue;
      SmallVector<Use *, 4> Leaves;
      guard_leaves(Br->getOperandUse(0), Leaves, 0);
      for (Use *U : Leaves)
        Changed |= expose_guard(*U, *L, Trips, SE, DL);
    }
  }
  return Changed;
}

/// Optimises a block loop: index locals to registers, invariants out of the loops, guards that
/// hold for a whole loop unswitched, then vectorise.
void optimise_block_loop(Function &B, FunctionAnalysisManager &FAM, bool Jam = false) {
  FunctionPassManager Early;
  Early.addPass(SROAPass());
  Early.addPass(EarlyCSEPass(true));
  Early.addPass(InstCombinePass());
  Early.addPass(SimplifyCFGPass());
  Early.addPass(createFunctionToLoopPassAdaptor(LoopRotatePass(), false));
  Early.addPass(createFunctionToLoopPassAdaptor(
      LICMPass(SetLicmMssaOptCap, SetLicmMssaNoAccForPromotionCap, true), true));
  Early.run(B, FAM);
  // (before IndVarSimplify, which may widen the thread loops' threadIdx.x into a phi of its own)
  if (Jam && uniform_inner_trips(B, FAM)) {
    FAM.invalidate(B, PreservedAnalyses::none());
    FunctionPassManager Fold;
    Fold.addPass(InstCombinePass());
    Fold.addPass(SimplifyCFGPass());
    Fold.run(B, FAM);
  }
  FunctionPassManager Counters;
  Counters.addPass(createFunctionToLoopPassAdaptor(IndVarSimplifyPass(), false));
  Counters.addPass(GVNPass());
  Counters.run(B, FAM);
  // Unswitched always (not only where a guard was exposed): a test of values every thread holds
  // alike stays inside a loop over the threads otherwise, e.g. a phase's part of the kernel's own
  // loop, `k0 < n` in a tiled SGEMM, whose sides store differently; a conditional store does not
  // vectorise (the tiled SGEMM's tile loads ran one thread at a time: 23.9 ms, unswitched 18.7,
  // the loops 11.5).
  expose_uniform_guards(B, FAM);
  {
    FAM.invalidate(B, PreservedAnalyses::none());
    FunctionPassManager Unswitch;
    Unswitch.addPass(createFunctionToLoopPassAdaptor(SimpleLoopUnswitchPass(true), true));
    Unswitch.addPass(InstCombinePass());
    Unswitch.addPass(SimplifyCFGPass());
    // A jam copy's loop over the threads holds an inner loop: above SimpleLoopUnswitch's size
    // limit (unswitch-threshold, 50) unless raised (where not set by hand); and a guard such as
    // row < n && col < n is unswitched one operand per run.
    auto *Limit = static_cast<cl::opt<int> *>(cl::getRegisteredOptions().lookup("unswitch-threshold"));
    const int Saved = Limit ? Limit->getValue() : 0;
    const bool Raise = Jam && Limit && Limit->getNumOccurrences() == 0;
    if (Raise)
      Limit->setValue(std::max(Saved, 400));
    for (int Run = 0; Run < (Jam ? 2 : 1); ++Run)
      Unswitch.run(B, FAM);
    if (Raise)
      Limit->setValue(Saved);
  }
  if (Jam) {
    FunctionPassManager Jammer;
    Jammer.addPass(createFunctionToLoopPassAdaptor(LoopUnrollAndJamPass(2)));
    // Each thread's copy of the inner loop's counter is one counter again (congruent IVs), so
    // that the threads' shared loads (a[row * n + k]) are one load.
    Jammer.addPass(createFunctionToLoopPassAdaptor(IndVarSimplifyPass(), false));
    Jammer.addPass(GVNPass());
    Jammer.addPass(InstCombinePass());
    Jammer.addPass(SimplifyCFGPass());
    Jammer.run(B, FAM);
  }
  FunctionPassManager Late;
  Late.addPass(LoopVectorizePass());
  Late.addPass(EarlyCSEPass(false));
  Late.addPass(InstCombinePass());
  Late.addPass(SimplifyCFGPass());
  Late.addPass(SLPVectorizerPass());
  Late.run(B, FAM);
}

/// Does B use thread-local storage other than the index variables (a __shared__ variable), or
/// the block's dynamic shared memory?
bool uses_shared_memory(const Function &B) {
  SmallVector<const Constant *, 16> Work;
  SmallPtrSet<const Constant *, 32> Seen;
  for (const Instruction &I : instructions(B)) {
    if (const auto *CB = dyn_cast<CallBase>(&I); CB && dynamic_shared_base(*CB))
      return true;
    for (const Use &U : I.operands())
      if (const auto *C = dyn_cast<Constant>(U.get()))
        Work.push_back(C);
  }
  while (!Work.empty()) {
    const Constant *C = Work.pop_back_val();
    if (!Seen.insert(C).second)
      continue;
    if (const auto *G = dyn_cast<GlobalVariable>(C)) {
      if (G->isThreadLocal() && !is_contained(kIndexVars, G->getName()))
        return true;
    } else if (isa<ConstantExpr>(C) || isa<ConstantAggregate>(C)) {
      for (const Use &U : C->operands())
        Work.push_back(cast<Constant>(U.get()));
    }
  }
  return false;
}

/// Is this module compiled with the emulator's access tracing? (kernel.hpp defines the marker
/// where -fsanitize-coverage is on.)
bool traced_module(const Module &M) { return M.getNamedGlobal(gpulab::emu::pass_abi::traced_file) != nullptr; }

/// Before the vectoriser: a copy of each barrier-free block-loop candidate with an inner loop
/// (NAME.gpulab_early, optnone, so that the rest of the pipeline leaves it as it is), from which
/// GpulabBlockLoopPass makes the jam copy of its block loop and which it then erases.
struct GpulabEarlyCopyPass : PassInfoMixin<GpulabEarlyCopyPass> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &FAM) {
    if (!block_loop_candidate(F) || FAM.getResult<LoopAnalysis>(F).empty())
      return PreservedAnalyses::all();
    Module &M = *F.getParent();
    if (M.getFunction((F.getName() + kEarlySuffix).str()))
      return PreservedAnalyses::all();
    Function *E = Function::Create(F.getFunctionType(), GlobalValue::InternalLinkage, F.getAddressSpace(),
                                   F.getName() + kEarlySuffix, &M);
    ValueToValueMapTy VMap;
    SmallVector<ReturnInst *, 8> Returns;
    clone_body(F, *E, VMap, Returns);
    E->addFnAttr(Attribute::NoInline);
    E->addFnAttr(Attribute::OptimizeNone);
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

struct GpulabBlockLoopPass : PassInfoMixin<GpulabBlockLoopPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM) {
    const SmallVector<Function *, 16> Candidates = functions_where(M, block_loop_candidate);
    if (Candidates.empty())
      return PreservedAnalyses::all();
    FunctionAnalysisManager &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
    SmallVector<std::pair<Function *, Function *>, 16> Pairs;
    for (Function *F : Candidates)
      if (Function *B = has_stop(*F) ? make_region_loop(*F) : make_block_loop(*F)) {
        if (verifyFunction(*B)) {  // never expected; the kernel then simply has no block loop
          B->eraseFromParent();
          continue;
        }
        Function *Early = M.getFunction((F->getName() + kEarlySuffix).str());
        Function *J = Early && !has_stop(*F) ? make_block_loop(*Early) : nullptr;
        if (J && !make_thread_jam(*B, *J, FAM, nullptr)) {
          J->eraseFromParent();
          J = nullptr;
        }
        // A copy that fails the verifier (never expected either): no block loop for the kernel.
        auto broken = [&](Function *Copy) {
          if (!verifyFunction(*Copy) && !verifyFunction(*B))
            return false;
          for (Function *X : {B, Copy}) {
            FAM.clear(*X, X->getName());
            X->eraseFromParent();
          }
          return true;
        };
        if (J && broken(J))
          continue;
        if (J)
          optimise_block_loop(*J, FAM, true);
        // A kernel with barriers: a copy of its block loop whose index sums do not wrap, run
        // where the grid allows (the tiles' loads along threadIdx.x then vectorise).
        // Where its threads run inner loops, that copy is made from the early copy and jammed
        // (as J above), its objects declared apart where the runtime finds them apart.
        SmallVector<IndexSum, 4> Sums;
        Function *W = Early && has_stop(*F) ? make_region_loop(*Early, &Sums) : nullptr;
        const bool Jammed = W && make_thread_jam(*B, *W, FAM, &Sums);
        if (W && !Jammed) {
          FAM.clear(*W, W->getName());
          W->eraseFromParent();
          W = nullptr;
        }
        if (!W && has_stop(*F)) {
          Sums.clear();
          if ((W = make_region_loop(*F, &Sums))) {
            W->setName(B->getName() + ".wide");
            scope_shared_apart(*W);
            call_copy_where(*B, *W, Sums, {}, 0);
          }
        }
        if (W && broken(W))
          continue;
        if (W)
          optimise_block_loop(*W, FAM, Jammed);
        optimise_block_loop(*B, FAM);
        Pairs.emplace_back(F, B);
      }
    for (Function *Early : functions_where(M, [](const Function &F) { return F.getName().endswith(kEarlySuffix); })) {
      FAM.clear(*Early, Early->getName());
      Early->eraseFromParent();
    }
    if (Pairs.empty())
      return PreservedAnalyses::all();
    LLVMContext &Ctx = M.getContext();
    Type *I8Ptr = Type::getInt8PtrTy(Ctx);
    Type *I32 = Type::getInt32Ty(Ctx);
    FunctionCallee Register = M.getOrInsertFunction(
        gpulab::emu::pass_abi::register_block, FunctionType::get(Type::getVoidTy(Ctx), {I8Ptr, I8Ptr, I32}, false));
    // Flags: 1 the file is traced, 2 the block loop uses shared memory (poisoned per block).
    const unsigned Traced = traced_module(M) ? 1 : 0;
    SmallVector<SmallVector<Value *, 3>, 16> Rows;
    for (auto &[F, BL] : Pairs)
      Rows.push_back({ConstantExpr::getPointerCast(F, I8Ptr), ConstantExpr::getPointerCast(BL, I8Ptr),
                      ConstantInt::get(I32, Traced | (uses_shared_memory(*BL) ? 2 : 0))});
    add_registration(M, "gpulab.twins.register_blocks", Register, Rows);
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

struct GpulabTwinPass : PassInfoMixin<GpulabTwinPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    if (!traced_module(M))
      return PreservedAnalyses::all();  // nothing to twin: no hooks
    const SmallVector<Function *, 16> Originals = functions_where(M, twinnable);
    if (Originals.empty())
      return PreservedAnalyses::all();

    LLVMContext &Ctx = M.getContext();
    ValueToValueMapTy VMap;
    SmallVector<std::pair<Function *, Function *>, 32> Pairs;
    for (Function *F : Originals) {
      Function *T = Function::Create(F->getFunctionType(), GlobalValue::InternalLinkage,
                                     F->getAddressSpace(), F->getName() + kSuffix, &M);
      VMap[F] = T;
      Pairs.emplace_back(F, T);
    }
    for (auto &[F, T] : Pairs) {
      SmallVector<ReturnInst *, 8> Returns;
      clone_body(*F, *T, VMap, Returns);
    }

    // Indirect calls in the twins go through gpulab_emu_plain_twin.
    Type *I8Ptr = Type::getInt8PtrTy(Ctx);
    FunctionCallee Lookup =
        M.getOrInsertFunction(gpulab::emu::pass_abi::plain_twin, FunctionType::get(I8Ptr, {I8Ptr}, false));
    for (auto &[F, T] : Pairs) {
      SmallVector<CallBase *, 8> Indirect;
      for (Instruction &I : instructions(*T))
        if (auto *CB = dyn_cast<CallBase>(&I))
          if (CB->isIndirectCall() && !CB->isInlineAsm())
            Indirect.push_back(CB);
      for (CallBase *CB : Indirect) {
        IRBuilder<> B(CB);
        Value *Callee = CB->getCalledOperand();
        Value *Raw = B.CreatePointerCast(Callee, I8Ptr);
        Value *Twin = B.CreateCall(Lookup, {Raw}, "gpulab.twin");
        CB->setCalledOperand(B.CreatePointerCast(Twin, Callee->getType()));
      }
    }

    // A constructor that registers every pair.
    FunctionCallee Register = M.getOrInsertFunction(
        gpulab::emu::pass_abi::register_twin, FunctionType::get(Type::getVoidTy(Ctx), {I8Ptr, I8Ptr}, false));
    SmallVector<SmallVector<Value *, 3>, 32> Rows;
    for (auto &[F, T] : Pairs)
      Rows.push_back({ConstantExpr::getPointerCast(F, I8Ptr), ConstantExpr::getPointerCast(T, I8Ptr)});
    add_registration(M, "gpulab.twins.register", Register, Rows);
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

void registerCallbacks(PassBuilder &PB) {
  PB.registerVectorizerStartEPCallback(
      [](FunctionPassManager &FPM, OptimizationLevel) { FPM.addPass(GpulabEarlyCopyPass()); });
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(GpulabBlockLoopPass());
        MPM.addPass(GpulabTwinPass());
      });
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
        if (Name == "gpulab-twins") {
          MPM.addPass(GpulabTwinPass());
          return true;
        }
        if (Name == "gpulab-block-loops") {
          MPM.addPass(GpulabBlockLoopPass());
          return true;
        }
        return false;
      });
}

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "GpulabTwins", "1", registerCallbacks};
}
