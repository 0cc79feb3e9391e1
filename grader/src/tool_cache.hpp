// What a tool printed about files that do not change between grades (nm of the libraries a
// runner links, a compiler's search directories and library paths), kept on disk so that every
// grade made with one build does not ask again. Internal to the grader (vetting, hand-in builds).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::grade::tool_cache {

/// Where entries are kept (the grader's build directory gives <build>/.gpulab-tool-cache); empty,
/// the default, keeps nothing.
void set_directory(const std::string& dir);

/// The output of the command `argv`, which depends only on the files `inputs` (the tool's own
/// binary among them where its version matters): the stored one when every input has the path,
/// size and modification time it had when it was stored, else `produce()`'s, stored when it has
/// one. Inputs are absolute paths (with a relative one nothing is cached). Never for a hand-in's
/// files: they are not trusted to keep their times.
std::optional<std::string> output(const std::vector<std::string>& argv, const std::vector<std::string>& inputs,
                                  const std::function<std::optional<std::string>()>& produce);

}  // namespace gpulab::grade::tool_cache
