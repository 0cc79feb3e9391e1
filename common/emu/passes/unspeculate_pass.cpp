//===- unspeculate_pass.cpp - gpulab: trace only the loads the code makes -===//
//
// LLVM 14 new-pass-manager plugin ("GpulabUnspeculate"), for kernel files
// built with the emulator's access tracing (-fsanitize-coverage=trace-loads,
// trace-stores; kernel.hpp then defines the marker gpulab_emu_traced_file).
//
// Why.  The optimiser may execute a load the source makes only on one side of
// a condition on both sides, when the address is known to be valid (a
// constant index into a __shared__ array):
//     v = warp == 0 ? warp_sums[0] : 0.0f;
// becomes `%l = load warp_sums[0]; %v = select %c, %l, 0.0`.  Code generation
// turns the select back into a branch, so the load itself stays conditional,
// but SanitizerCoverage instruments the IR before that and reports the load
// in every thread.  The emulator's sanitizer then sees threads of other warps
// read a word warp 0 is still writing, a race the program does not have (on a
// GPU the same code reads nothing in those threads).
//
// Which loads.  At the start of the pipeline every load of the file gets a
// mark (metadata gpulab.source).  Passes that execute an instruction where the
// source did not (SimplifyCFG's FoldTwoEntryPHINode and
// SpeculativelyExecuteBB, LICM's hoisting of loads that are not sure to run)
// drop the metadata they do not know, since it may depend on the condition
// they hoisted the instruction above; so at the end, a load without the mark
// that only a select uses was speculated.  (Loads merged by CSE lose it too,
// but the merged load then has its other users.)
//
// What.  Before SanitizerCoverage runs (OptimizerLastEP callbacks of plugins
// come before clang's sanitizer passes), every select whose chosen operand is
// such a load, in the same block with nothing that may write memory in
// between, becomes a branch: the load moves to the side that uses it (with the
// select's source location, should it have lost its own), and a phi joins the
// sides.  The code computes the
// same values, and the hooks see the loads the source makes.  Loads hoisted
// out of loops (LICM) are not undone.
//===----------------------------------------------------------------------===//

#define GPULAB_PASS_ABI_NAMES_ONLY
#include "gpulab/emu/pass_abi.hpp"  // the runtime functions this pass calls
#include <utility>

#include "llvm/IR/DebugLoc.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

using namespace llvm;

namespace {

constexpr const char *kSourceMark = "gpulab.source";

/// Is this module compiled with the emulator's access tracing?
bool traced_module(const Module &M) { return M.getNamedGlobal(gpulab::emu::pass_abi::traced_file) != nullptr; }

/// The start of the pipeline: marks every load the source makes, where it makes it.
struct GpulabMarkLoadsPass : PassInfoMixin<GpulabMarkLoadsPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    if (!traced_module(M))
      return PreservedAnalyses::all();
    MDNode *Mark = MDNode::get(M.getContext(), {});
    for (Function &F : M)
      for (Instruction &I : instructions(F))
        if (isa<LoadInst>(I))
          I.setMetadata(kSourceMark, Mark);
    return PreservedAnalyses::all();  // metadata only
  }
  static bool isRequired() { return true; }
};

/// V, when it is a speculated load (without the mark) that only S uses, in S's block, with
/// nothing between the two that may write memory (so that the load gives the same value at S);
/// else null.
LoadInst *speculated_load(Value *V, SelectInst &S) {
  auto *L = dyn_cast<LoadInst>(V);
  if (!L || !L->hasOneUse() || L->getParent() != S.getParent() || L->isVolatile() || L->isAtomic())
    return nullptr;
  if (L->getMetadata(kSourceMark))
    return nullptr;  // a load the source makes where it stands
  for (Instruction *I = L->getNextNode(); I && I != &S; I = I->getNextNode())
    if (I->mayWriteToMemory() || I->mayThrow())
      return nullptr;
  return L;
}

/// Turns S into a branch with the load(s) it chooses from on their own side.
void unspeculate(SelectInst &S, LoadInst *OnTrue, LoadInst *OnFalse) {
  Instruction *ThenTerm = nullptr, *ElseTerm = nullptr;
  SplitBlockAndInsertIfThenElse(S.getCondition(), &S, &ThenTerm, &ElseTerm);
  for (auto [L, Term] : {std::pair<LoadInst *, Instruction *>{OnTrue, ThenTerm}, {OnFalse, ElseTerm}})
    if (L) {
      L->moveBefore(Term);
      if (!L->getDebugLoc() || L->getDebugLoc().getLine() == 0)
        L->setDebugLoc(S.getDebugLoc());  // the line of the condition that chooses it
    }
  PHINode *P = PHINode::Create(S.getType(), 2, S.getName(), &S);
  P->addIncoming(S.getTrueValue(), ThenTerm->getParent());
  P->addIncoming(S.getFalseValue(), ElseTerm->getParent());
  P->setDebugLoc(S.getDebugLoc());
  S.replaceAllUsesWith(P);
  S.eraseFromParent();
}

struct GpulabUnspeculatePass : PassInfoMixin<GpulabUnspeculatePass> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    if (F.isDeclaration() || F.hasFnAttribute(Attribute::NoSanitizeCoverage) || !traced_module(*F.getParent()))
      return PreservedAnalyses::all();
    SmallVector<SelectInst *, 8> Selects;
    for (Instruction &I : instructions(F))
      if (auto *S = dyn_cast<SelectInst>(&I))
        if (S->getCondition()->getType()->isIntegerTy(1))  // not a vector select
          Selects.push_back(S);
    bool Changed = false;
    for (SelectInst *S : Selects) {
      LoadInst *OnTrue = speculated_load(S->getTrueValue(), *S);
      LoadInst *OnFalse = speculated_load(S->getFalseValue(), *S);
      if (!OnTrue && !OnFalse)
        continue;
      unspeculate(*S, OnTrue, OnFalse);
      Changed = true;
    }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

void registerCallbacks(PassBuilder &PB) {
  PB.registerPipelineStartEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(GpulabMarkLoadsPass()); });
  PB.registerOptimizerLastEPCallback([](ModulePassManager &MPM, OptimizationLevel) {
    MPM.addPass(createModuleToFunctionPassAdaptor(GpulabUnspeculatePass()));
  });
  PB.registerPipelineParsingCallback(
      [](StringRef Name, FunctionPassManager &FPM, ArrayRef<PassBuilder::PipelineElement>) {
        if (Name != "gpulab-unspeculate")
          return false;
        FPM.addPass(GpulabUnspeculatePass());
        return true;
      });
}

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "GpulabUnspeculate", "1", registerCallbacks};
}
