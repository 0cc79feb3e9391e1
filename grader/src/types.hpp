// The grader's closed vocabularies as types: the back-end a grade runs on, the kind of a check,
// and the implementation graded. Each is an enum class with ONE table (below) that gives its
// names and properties: adding a back-end, a check kind or an implementation is a row there.
// Text appears only at the edges: the command line (parse_*), the lab process's protocol and
// the rubric's sections (parse_check_kind, name), and the reports (name).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpulab::grade {

enum class Backend { emu, cuda, rocm };
enum class CheckKind { correctness, performance, sanitizer, portability };
enum class Impl { student, solution, submission };

/// A back-end's row: its name and what the grader does differently on it.
struct BackendTraits {
  Backend backend;
  const char* name;
  bool gpu;                  ///< runs on a GPU (timed, takes turns at the device); false: the emulator
  bool compute_sanitizer;    ///< its sanitizer checks run under NVIDIA's compute-sanitizer
  int portability_warp;      ///< GPU grades: the emulator's warp size for the portability check
};
inline constexpr std::array<BackendTraits, 3> kBackends{{
    {Backend::emu, "emu", false, false, 0},
    {Backend::cuda, "cuda", true, true, 64},
    {Backend::rocm, "rocm", true, false, 32},
}};

inline constexpr std::array<std::pair<CheckKind, const char*>, 4> kCheckKinds{{
    {CheckKind::correctness, "correctness"},
    {CheckKind::performance, "performance"},
    {CheckKind::sanitizer, "sanitizer"},
    {CheckKind::portability, "portability"},  // GPU grades: the emulator at the other warp size
}};

inline constexpr std::array<std::pair<Impl, const char*>, 3> kImpls{{
    {Impl::student, "student"},        // the file the student edits in labs/
    {Impl::solution, "solution"},      // the reference in solutions/
    {Impl::submission, "submission"},  // --submission PATH
}};

namespace detail {
template <class E, std::size_t N>
const char* name_in(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [e, text] : table)
    if (e == value) return text;
  return "?";
}
template <class E, std::size_t N>
std::optional<E> parse_in(const std::array<std::pair<E, const char*>, N>& table, std::string_view text) {
  for (const auto& [e, name] : table)
    if (text == name) return e;
  return std::nullopt;
}
}  // namespace detail

inline const BackendTraits& traits(Backend b) {
  for (const auto& row : kBackends)
    if (row.backend == b) return row;
  return kBackends[0];
}
inline const char* name(Backend b) { return traits(b).name; }
inline const char* name(CheckKind k) { return detail::name_in(kCheckKinds, k); }
inline const char* name(Impl i) { return detail::name_in(kImpls, i); }

inline std::optional<Backend> parse_backend(std::string_view text) {
  for (const auto& row : kBackends)
    if (text == row.name) return row.backend;
  return std::nullopt;
}
inline std::optional<CheckKind> parse_check_kind(std::string_view text) { return detail::parse_in(kCheckKinds, text); }
inline std::optional<Impl> parse_impl(std::string_view text) { return detail::parse_in(kImpls, text); }

inline bool is_gpu(Backend b) { return traits(b).gpu; }

}  // namespace gpulab::grade
