// The allow-list behind vetting::check_object_symbols: which symbols a submission's object may
// define and which it may reference. Internal to the grader (vetting.cpp and its tests).
#pragma once

#include <set>
#include <string>
#include <vector>

namespace gpulab::grade::vetting::rules {

/// Why a symbol is refused; `allowed` when it is not.
enum class Rule {
  allowed,
  dynamic_loading,
  processes,
  files,
  environment,
  exit_and_signals,
  system_calls,
  vendor_libraries,
  shared_host_memory,
  cache_controls,
  grader_internals,
  overriding,
  not_in_api,
};

/// "no dynamic loading", ... (what the messages call the rule).
const char* rule_name(Rule r);
/// One line for the student: why the rule exists and what to do instead.
const char* rule_hint(Rule r);

/// The components of the qualified name of the entity a mangled (Itanium C++) symbol names, as
/// far as needed to know its namespace: "_ZN6gpulab3emu10sync_blockE..." -> {gpulab, emu,
/// sync_block}; a local entity gives its function's ("_ZZ7row_sumPKfPfiE5cache" -> {row_sum});
/// global operators "operator nw" etc. Empty when `mangled` is not a C++ name or cannot be read.
std::vector<std::string> scope_of(const std::string& mangled);

/// The demangled form, for messages (the mangled name when it does not demangle).
std::string demangle(const std::string& mangled);

/// Symbols the compilers generate themselves, which a definition check must let through
/// (DW.ref.__gxx_personality_v0, __clang_call_terminate, __hip_cuid_*, ...).
bool compiler_generated(const std::string& name);

/// Whether a submission may reference `name` (an undefined symbol of its object).
Rule classify_reference(const std::string& name);

/// Whether a submission may define `name`: `type` is nm's letter (T, W, D, B, V ...), so that
/// weak definitions (W, V, u) and code (T, W, i) can be told apart.
Rule classify_definition(const std::string& name, char type, const std::vector<std::string>& contract_functions,
                         const std::set<std::string>& protected_symbols);

/// Whether a weak definition found in the grader's own libraries is one a submission also makes
/// legitimately (template and inline instances in std::, gpulab:: and the toolkits' namespaces,
/// compiler-generated symbols), so that defined_symbols leaves it out of the protected set.
bool shared_weak_instance(const std::string& name);

/// Symbols only the GPU compilers' module registration code may reference (atexit), and the
/// functions that code lives in: {symbol, function, a symbol that function must also call}.
struct CompilerContext {
  const char* symbol;
  const char* function;
  const char* companion;
};
const std::vector<CompilerContext>& compiler_contexts();

}  // namespace gpulab::grade::vetting::rules
