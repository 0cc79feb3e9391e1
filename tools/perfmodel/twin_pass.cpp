//===- twin_pass.cpp - gpulab: an untraced twin of every function ---------===//
//
// LLVM 14 new-pass-manager plugin ("GpulabTwins", pipeline name "gpulab-twins")
// for kernel files of the emu back-end built with access tracing
// (-fsanitize-coverage=trace-loads,trace-stores).  Before SanitizerCoverage
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

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
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

struct GpulabTwinPass : PassInfoMixin<GpulabTwinPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    SmallVector<Function *, 32> Originals;
    for (Function &F : M)
      if (twinnable(F))
        Originals.push_back(&F);
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
      auto TA = T->arg_begin();
      for (Argument &A : F->args()) {
        TA->setName(A.getName());
        VMap[&A] = &*TA++;
      }
      SmallVector<ReturnInst *, 8> Returns;
      CloneFunctionInto(T, F, VMap, CloneFunctionChangeType::LocalChangesOnly, Returns);
      T->setLinkage(GlobalValue::InternalLinkage);
      T->setVisibility(GlobalValue::DefaultVisibility);
      T->setComdat(nullptr);
      T->addFnAttr(Attribute::NoSanitizeCoverage);
    }

    // Indirect calls in the twins go through gpulab_emu_plain_twin.
    Type *I8Ptr = Type::getInt8PtrTy(Ctx);
    FunctionCallee Lookup =
        M.getOrInsertFunction("gpulab_emu_plain_twin", FunctionType::get(I8Ptr, {I8Ptr}, false));
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
    Type *VoidTy = Type::getVoidTy(Ctx);
    FunctionCallee Register = M.getOrInsertFunction(
        "gpulab_emu_register_twin", FunctionType::get(VoidTy, {I8Ptr, I8Ptr}, false));
    Function *Ctor = Function::Create(FunctionType::get(VoidTy, false), GlobalValue::InternalLinkage,
                                      "gpulab.twins.register", &M);
    Ctor->addFnAttr(Attribute::NoSanitizeCoverage);
    IRBuilder<> B(BasicBlock::Create(Ctx, "entry", Ctor));
    for (auto &[F, T] : Pairs)
      B.CreateCall(Register, {B.CreatePointerCast(F, I8Ptr), B.CreatePointerCast(T, I8Ptr)});
    B.CreateRetVoid();
    appendToGlobalCtors(M, Ctor, 0);
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

void registerCallbacks(PassBuilder &PB) {
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(GpulabTwinPass()); });
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
        if (Name == "gpulab-twins") {
          MPM.addPass(GpulabTwinPass());
          return true;
        }
        return false;
      });
}

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "GpulabTwins", "1", registerCallbacks};
}
