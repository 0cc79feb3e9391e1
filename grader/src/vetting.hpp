// Vetting a submission before and after it is compiled: what it may hand in, what it may include,
// what it may define and what it may call.
//
// A submission is one kernel file linked into the lab's process together with the checks, the
// harness and (on emu) the emulator. Whatever it defines or calls runs with the grader's powers,
// so these rules keep it to the vocabulary of the course: the GPU runtime, gpulab's API, math,
// allocation and the C++ standard library. Every function returns an empty string when all is
// well, else a message for the student: where (file:line when known), what, the rule, a hint.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace gpulab::grade::vetting {

/// Larger hand-in files are refused: a kernel file is a few KiB; a huge one is a way to slow the
/// grader down, not a solution.
constexpr unsigned long long kMaxHandinFileBytes = 1ull << 20;

/// Resolves `file`, a file inside the hand-in `handin_root` (the directory or the single file the
/// student handed in). Refuses the hand-in root itself being a symbolic link, any component of
/// `file` below the root that is a symbolic link leading outside the root (a link to the
/// reference solution), a file outside the root, one that is not a regular file (FIFO, device),
/// one with other hard links, and one larger than kMaxHandinFileBytes. On success sets
/// `resolved_out` to the file's canonical path: read that, not `file`.
std::string resolve_handin_file(const std::string& handin_root, const std::string& file,
                                std::string& resolved_out);

/// The text to compile for `source_text`: a leading UTF-8 byte-order mark removed, line endings
/// kept as they are, preceded by `#line 1 "<display_path>"` so that compiler messages and the
/// emulator's diagnostics name the student's file. The path is escaped for a string literal
/// (`\` and `"`, and `?` so that no trigraph forms) and control characters in it become `?`, so
/// any path gives a valid directive.
std::string staged_text(const std::string& source_text, const std::string& display_path);

/// System and toolkit include directories a submission may include from (CUDA, ROCm, the C and
/// C++ libraries, the compiler's own headers). A trailing '*' matches any directory name that
/// starts with what precedes it (/usr/local/cuda* matches /usr/local/cuda-13.0).
const std::vector<std::string>& system_include_dirs();
/// Adds a compiler's own search directories (e.g. a toolchain installed under /opt) to the
/// system headers; directories inside the repository stay refused all the same.
void add_system_include_dirs(const std::vector<std::string>& dirs);

/// Checks every file a compilation read, from its dependency file: the make rules written by
/// `-MD -MF` (clang, gcc, nvcc, hipcc; escaped spaces and line continuations) or the output of
/// `ninja -t deps <object>`. Allowed: the compiled source itself (the first dependency), files
/// inside `allowed_dirs` (gpulab's headers, the staging directory of the hand-in), the files in
/// `allowed_files` (the lab's contract headers), and system headers (system_include_dirs()) —
/// but nothing inside `repo_root` that is not explicitly allowed (solutions/, grader/, other
/// labs, build trees), even where a system directory contains the repository. Everything else
/// (/etc/passwd, /proc/..., /dev/..., another student's files) is refused. Paths are compared
/// after resolving symbolic links and "..".
/// The rule of check_dependencies for one file (`path`, absolute or relative to the working
/// directory): whether a submission may read it. Compiler messages about other files are not
/// shown either (their text could be anything the sandbox can read).
bool may_include(const std::string& path, const std::string& repo_root, const std::vector<std::string>& allowed_dirs,
                 const std::vector<std::string>& allowed_files);

std::string check_dependencies(const std::string& depfile, const std::string& repo_root,
                               const std::vector<std::string>& allowed_dirs,
                               const std::vector<std::string>& allowed_files);

/// Refuses the headers of the libraries a lab forbids (its rubric's `[lab] forbidden_libraries`,
/// e.g. "cub thrust hipcub rocprim"): any file the compilation read (its dependency file) inside a
/// directory of one of those names. Header-only libraries leave no symbol of their own to refuse
/// (their templates are instantiated in the submission), so their headers are what gives them away.
std::string check_library_headers(const std::string& depfile, const std::vector<std::string>& libraries);

/// Checks the submission's object files (host ELF objects of clang, nvcc or hipcc), with nm and
/// objdump:
///  * definitions: nothing in `protected_symbols` (see defined_symbols), no C-linkage functions,
///    no `main`, no replacement of the global operator new/delete, no strong definitions in the
///    library namespaces (gpulab::, std:: ...; their weak template and inline instances are
///    fine), nothing at all in the grader's namespaces (gpulab::grade::, testing::, benchmark::,
///    labNN::) or CUTLASS's;
///  * references: only the allow-list of symbol_rules.cpp (GPU runtime, gpulab's API and the
///    emulator's kernel vocabulary, math, allocation, the C++ runtime and standard library
///    except files and threads, string functions, printing to stdout/stderr), or symbols one of
///    `objects` defines. `atexit` is accepted only from the GPU compilers' own registration code;
///  * no raw system call instructions (x86-64 objects).
/// `contract_functions` are the lab's entry points ("row_sum"), always allowed to be defined.
/// `display_name` is the student's file name used in the messages ("row_sum.cu").
std::string check_object_symbols(const std::vector<std::string>& objects,
                                 const std::vector<std::string>& contract_functions,
                                 const std::set<std::string>& protected_symbols,
                                 const std::string& display_name);

/// The symbols (mangled) a submission must not define, from the libraries and objects it is
/// linked with (libgpulab_emu.so with nm -D, libgpulab_host.a, libgpulab_harness.a, the lab's
/// checks objects): every strong global definition, and the weak ones outside the namespaces a
/// submission legitimately instantiates too (std::, gpulab:: ... templates and inline
/// functions), e.g. the checks' own test classes. Throws std::runtime_error when a file cannot
/// be read (the grader must not go on without its protection).
std::set<std::string> defined_symbols(const std::vector<std::string>& files);

/// The C-linkage names (not mangled) that shared libraries (nm -D) or archives use, defined there
/// or referenced: a C-linkage definition of one of them in a submission would take the place of
/// the library's function, or be called by the library. Throws std::runtime_error when a file
/// cannot be read.
std::set<std::string> library_c_names(const std::vector<std::string>& files);

}  // namespace gpulab::grade::vetting
