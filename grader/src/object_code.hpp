// Reading object files for vetting: their symbols (nm) and what their code references from where
// (objdump), for clang, nvcc and hipcc host objects. Internal to the grader (vetting.cpp).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpulab::grade::vetting::objects {

struct Symbol {
  std::string name;  ///< mangled; "name@VERSION" of shared libraries without the version
  char type;         ///< nm's letter: T, W, U, w, D, B, V, u, i ...
};

/// Every symbol of an object, archive (all members) or, with `dynamic`, shared library. A
/// `library` (one the runner links, never a hand-in's object) is read once per version of it
/// (tool_cache.hpp).
bool read_symbols(const std::string& file, bool dynamic, std::vector<Symbol>& out, std::string& error,
                  bool library = false);

/// What the disassembly says: where each symbol is referenced from, and raw system calls.
struct Code {
  struct Reloc {
    std::string function, symbol;
    std::size_t insn;  ///< index in body[function]
    int line;          ///< in the student's file; 0 when unknown
  };
  std::map<std::string, std::map<std::string, int>> by_function;  ///< function -> symbol -> references
  std::map<std::string, std::vector<std::string>> body;           ///< function -> "mnemonic operands"
  std::vector<Reloc> relocs;                                      ///< in code
  std::map<std::string, int> total;                               ///< symbol -> relocations, any section
  std::vector<std::pair<std::string, int>> raw_syscalls;          ///< instruction, line
};

/// Disassembles `object` (objdump -drlw, and -r for the relocations of data); lines count in the
/// source file named like `display` (the #line name of the staged file).
bool read_code(const std::string& object, const std::string& display, Code& code, std::string& error);

/// The line of the student's file of the first reference to `symbol` that the compiler did not
/// generate; 0 when unknown.
int reference_line(const Code& code, const std::string& symbol);

/// Whether every reference to `symbol` (in code and data) is one the GPU compilers generated:
/// their module registration code (atexit) or nvcc's host bodies of device functions (exit).
bool only_compiler_references(const std::string& symbol, const Code& code);

}  // namespace gpulab::grade::vetting::objects
