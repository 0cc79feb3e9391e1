// The source-text rules: what a hand-in's own text may say, read before it is compiled (and once
// more after preprocessing, for words built by token pasting).
//
// The grader learns about a hand-in from more than one compiler: the emulator's (or the GPU's)
// build that runs, and on the emulator an nvcc compile whose registers and PTX predict the speed
// on a GPU. Both must see the same program, so a hand-in may not ask which compiler reads it, and
// it may not reach into the C library or the compiler's own names (a FILE's descriptor is how a
// hand-in would write to the grader's record). The rules:
//  * inline assembly and the emulator's tracing hooks and counters;
//  * words that tell compilers or platforms apart (__CUDACC__, __CUDA_ARCH__, __clang__,
//    __has_include, ..., toolkit versions such as CUDART_VERSION, the project's GPULAB_* switches);
//  * identifiers reserved for the implementation (two underscores, or an underscore and a capital
//    letter) other than the CUDA/HIP vocabulary a kernel file uses (__global__, __shfl_down_sync,
//    __ldg, ...), and the C library's FILE internals (_fileno, _flags, _IO_*);
//  * a conditional directive (#if, #ifdef, ...) may test only macros the file itself defines, at
//    its top level, after its last #include, from its own macros alone: whatever it tests then
//    has the same value for every compiler;
//  * no #line or line markers (the metrics' and nvcc's lines must name the same source).
#pragma once

#include <string>

namespace gpulab::grade::source_rules {

/// The first break of the rules in a hand-in's own text, as a message for the student
/// ("name:line: 'word' ... (rule: source text, ...)\n  hint: ..."); empty when there is none.
/// `name` is the file's name as the student knows it.
std::string check_source(const std::string& text, const std::string& name);

/// The rules a preprocessed text can still break: `text` holds only the hand-in's own lines after
/// preprocessing (the others blank), where a word built by token pasting is spelt out. Headers'
/// macros expand to reserved names there (assert, offsetof, the portability layer's qualifiers),
/// so only the words no header macro produces are refused: assembly, the tracing hooks and the
/// FILE internals. (A compiler-identifying word pasted outside a conditional is no macro test:
/// where one compiler defines it and the other does not, the other fails to compile.)
std::string check_preprocessed(const std::string& text, const std::string& name);

}  // namespace gpulab::grade::source_rules
