// solutions/06-sgemm/bench/tuned_config.hpp - how the tile search (sgemm_tune --write) puts its
// winner into sgemm_configs.hpp: the `using LargeConfig = TileConfig<...>;` line and kRasterRows
// are replaced, and a comment above the line names the GPU, the size and the speed measured.
// Plain C++ (no CUDA), so that its test runs on every back-end (tests/tuned_config_test.cpp).
#pragma once

#include <regex>
#include <stdexcept>
#include <string>

namespace sgemm_tuned {

/// The marker of the comment sgemm_tune writes above LargeConfig (replaced on the next write).
inline const char* kMarker = "// Chosen by sgemm_tune --write: ";

/// `text` (sgemm_configs.hpp) with LargeConfig set to TileConfig<args> (e.g. "128, 128, 8, 64,
/// 64, 8, 16, 2"), kRasterRows to `raster` and the marker comment to `note`. Throws when the
/// file has no LargeConfig line or no kRasterRows line (a hand-edited file: nothing is guessed).
inline std::string rewrite(const std::string& text, const std::string& args, int raster,
                           const std::string& note) {
  static const std::regex marker("(^|\n)[ \t]*// Chosen by sgemm_tune --write: [^\n]*(?=\n)");
  static const std::regex large("(^|\n)([ \t]*)using LargeConfig = TileConfig<[^>]*>;");
  static const std::regex rows("(^|\n)([ \t]*)constexpr int kRasterRows = [0-9]+;");
  if (!std::regex_search(text, large))
    throw std::runtime_error("no line `using LargeConfig = TileConfig<...>;` to replace");
  if (!std::regex_search(text, rows)) throw std::runtime_error("no line `constexpr int kRasterRows = N;` to replace");
  auto literal = [](std::string s) {  // '$' means a group in a replacement: doubled, it is itself
    for (std::size_t at = s.find('$'); at != std::string::npos; at = s.find('$', at + 2)) s.insert(at, 1, '$');
    return s;
  };
  std::string out = std::regex_replace(text, marker, "");
  out = std::regex_replace(out, large,
                           "$1$2" + std::string(kMarker) + literal(note) + "\n$2using LargeConfig = TileConfig<" +
                               literal(args) + ">;",
                           std::regex_constants::format_first_only);
  out = std::regex_replace(out, rows, "$1$2constexpr int kRasterRows = " + std::to_string(raster) + ";",
                           std::regex_constants::format_first_only);
  return out;
}

}  // namespace sgemm_tuned
