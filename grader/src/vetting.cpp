#include "vetting.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "object_code.hpp"
#include "symbol_rules.hpp"

namespace fs = std::filesystem;

namespace gpulab::grade::vetting {
namespace {

using rules::Rule;
using objects::Code;
using objects::Symbol;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string basename_of(const std::string& path) { return fs::path(path).filename().string(); }

/// Whether `p` is `dir` or inside it; a last component of `dir` ending in '*' matches any name
/// starting with the rest (/usr/local/cuda* matches /usr/local/cuda-13.0/include/x.h).
bool under(const fs::path& p, const std::string& dir) {
  auto it = p.begin();
  const fs::path d(dir);
  for (auto dt = d.begin(); dt != d.end(); ++dt, ++it) {
    if (dt->empty()) continue;  // the empty name after a trailing '/'
    if (it == p.end()) return false;
    const std::string want = dt->string(), have = it->string();
    const bool prefix = std::next(dt) == d.end() && !want.empty() && want.back() == '*';
    if (prefix ? have.compare(0, want.size() - 1, want, 0, want.size() - 1) != 0 : have != want) return false;
  }
  return true;
}

fs::path canonical_or_normal(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(p), ec);
  return ec ? fs::absolute(p).lexically_normal() : c;
}

// ---- dependency files ------------------------------------------------------------------------

/// The prerequisites of a make-syntax dependency file (all rules; targets dropped), or the
/// dependencies listed by `ninja -t deps`.
std::vector<std::string> parse_depfile(const std::string& text) {
  std::vector<std::string> deps;
  if (text.find(": #deps ") != std::string::npos) {  // ninja -t deps: indented paths
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("    ", 0) == 0) deps.push_back(line.substr(4));
    return deps;
  }
  std::string tok;
  bool prerequisites = false;
  const auto flush = [&] {
    if (!tok.empty() && prerequisites) deps.push_back(tok);
    tok.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i], next = i + 1 < text.size() ? text[i + 1] : '\n';
    if (c == '\\' && (next == '\n' || next == '\r')) {  // line continuation
      flush();
      i += (next == '\r' && i + 2 < text.size() && text[i + 2] == '\n') ? 2 : 1;
    } else if (c == '\\' && (next == ' ' || next == '#')) {
      tok += next;
      ++i;
    } else if (c == '$' && next == '$') {
      tok += '$';
      ++i;
    } else if (c == '\n' || c == '\r') {
      flush();
      prerequisites = false;
    } else if (c == ' ' || c == '\t') {
      flush();
    } else if (c == ':' && !prerequisites && std::string(" \t\r\n\\").find(next) != std::string::npos) {
      tok.clear();  // the target
      prerequisites = true;
    } else {
      tok += c;
    }
  }
  flush();
  return deps;
}

/// The student's name for a staged source (from its `#line 1 "..."`) and the line of `source`
/// that includes a file named `name` (0 when not found: an include through a macro or a header).
std::pair<std::string, int> include_site(const std::string& source, const std::string& name) {
  std::istringstream in(read_text(source));
  std::string line, display = basename_of(source);
  int offset = 0;
  static const std::regex line_directive(R"(^#line 1 "((?:[^"\\]|\\.)*)\"\r?$)");
  static const std::regex include(R"(^\s*#\s*(include|include_next|import|embed)\b.*)");
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (n == 1 && std::regex_match(line, m, line_directive)) {
      display = basename_of(std::regex_replace(m[1].str(), std::regex(R"(\\(.))"), "$1"));
      offset = 1;
    } else if (std::regex_match(line, include)) {
      // The name as a whole path component: "name", <name>, .../name" or .../name>.
      for (auto p = line.find(name); p != std::string::npos; p = line.find(name, p + 1)) {
        const char before = p ? line[p - 1] : ' ', after = p + name.size() < line.size() ? line[p + name.size()] : ' ';
        if ((before == '"' || before == '<' || before == '/') && (after == '"' || after == '>')) return {display, n - offset};
      }
    }
  }
  return {display, 0};
}

std::string definition_reason(const std::string& name, char type, Rule rule, const std::set<std::string>& protected_symbols) {
  if (rule == Rule::grader_internals)
    return "gpulab::grade::, testing::, benchmark:: and the labs' namespaces belong to the grader";
  if (rule == Rule::vendor_libraries) return "CUTLASS and CuTe are vendor libraries";
  if (protected_symbols.count(name))
    return name.rfind("_Z", 0) == 0
               ? "the emulator, the harness or the lab's checks define it, and yours would take its place"
               : "a library the lab is linked with (the C library, the GPU runtime, the emulator) or the grader's"
                 " own code uses that name, and yours would take its place";
  if (name == "main") return "main belongs to the harness";
  const auto scope = rules::scope_of(name);
  if (name.rfind("_Z", 0) == 0 && scope.empty()) return "its name is not one a C++ compiler writes";
  if (scope.size() == 1) return "a replacement of the global operator new or delete would serve the grader's memory too";
  if (!scope.empty()) return scope[0] + ":: is a library's namespace: a submission may use its templates but not add functions to it";
  if (type == 'T' || type == 'W' || type == 'i')
    return "a function with C linkage of that name can take the place of the C library's, the GPU runtime's or the"
           " emulator's (names with a leading underscore, or the runtimes' cu*, cuda*, hip*, nv* ... prefixes, are"
           " theirs; a kernel of your own may have C linkage under another name)";
  return "that name belongs to the C library, the GPU runtime or the emulator";
}

struct Offences {
  std::vector<std::string> lines;
  std::vector<Rule> rules;
  void add(const std::string& line, Rule r) {
    for (const auto& l : lines)
      if (l == line) return;
    lines.push_back(line);
    rules.push_back(r);
  }
  /// The offences, then one hint per rule (or `hint` alone).
  std::string message(const std::string& hint = {}) const {
    std::string text, hints = hint.empty() ? "" : "\n  hint: " + hint;
    const std::size_t shown = std::min<std::size_t>(lines.size(), 8);
    for (std::size_t i = 0; i < shown; ++i) text += (i ? "\n" : "") + lines[i];
    if (lines.size() > shown) text += "\n(and " + std::to_string(lines.size() - shown) + " more)";
    std::set<Rule> seen;
    for (std::size_t i = 0; i < shown && hint.empty(); ++i)
      if (seen.insert(rules[i]).second) hints += std::string("\n  hint: ") + rules::rule_hint(rules[i]);
    return text + hints;
  }
};

}  // namespace

std::string resolve_handin_file(const std::string& handin_root, const std::string& file, std::string& resolved_out) {
  resolved_out.clear();
  std::error_code ec;
  const fs::path root_abs = fs::absolute(handin_root).lexically_normal();
  const fs::path root_lexical = root_abs.filename().empty() ? root_abs.parent_path() : root_abs;
  const std::string shown = fs::path(file).filename().string();
  if (fs::is_symlink(fs::symlink_status(root_lexical, ec)))
    return "the hand-in " + root_lexical.string() + " is a symbolic link (to " +
           fs::read_symlink(root_lexical, ec).string() +
           "): hand in the file or directory itself\n  hint: a link leads to files that are not part of your hand-in";
  // Directories above the hand-in are the grader's, so they are resolved; the hand-in is not.
  const fs::path root = fs::weakly_canonical(root_lexical.parent_path(), ec) / root_lexical.filename();
  const fs::path rel = fs::absolute(file).lexically_normal().lexically_relative(root_lexical);
  if (rel.empty() || *rel.begin() == "..")
    return file + " is not inside the hand-in " + root.string();
  fs::path at = root;
  for (const auto& part : rel) {
    if (part == ".") continue;
    at /= part;
    if (!fs::is_symlink(fs::symlink_status(at, ec))) continue;
    const fs::path target = fs::weakly_canonical(at, ec);
    if (ec || !under(target, root.string()))
      return shown + ": " + at.string() + " is a symbolic link to " + (ec ? fs::read_symlink(at, ec) : target).string() +
             ", outside the hand-in\n  hint: hand in the file itself, not a link to it";
  }
  const fs::path real = fs::canonical(at, ec);
  if (ec) return shown + ": " + at.string() + " cannot be read (" + ec.message() + ")";
  if (!under(real, root.string())) return shown + ": " + at.string() + " leads outside the hand-in, to " + real.string();
  struct stat st {};
  if (stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return shown + ": " + at.string() + " is not a regular file\n  hint: hand in the kernel file itself";
  if (st.st_nlink > 1)
    return shown + ": " + at.string() + " has other hard links (" + std::to_string(st.st_nlink - 1) +
           ")\n  hint: hand in a copy of your file, not a link to one";
  if (static_cast<unsigned long long>(st.st_size) > kMaxHandinFileBytes)
    return shown + " is " + std::to_string(st.st_size) + " bytes, more than the 1 MiB a kernel file may have";
  resolved_out = real.string();
  return {};
}

std::string staged_text(const std::string& source_text, const std::string& display_path) {
  std::string path;
  for (const char c : display_path) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') path += std::string("\\") + c;
    else if (c == '?') path += "\\?";  // no ??/ trigraph, whatever the language mode
    else if (u < 0x20 || u == 0x7f) path += '?';
    else path += c;
  }
  const bool bom = source_text.compare(0, 3, "\xEF\xBB\xBF") == 0;
  return "#line 1 \"" + path + "\"\n" + source_text.substr(bom ? 3 : 0);
}

namespace {
std::vector<std::string>& mutable_system_include_dirs() {
  static std::vector<std::string> dirs = {"/usr/include", "/usr/lib", "/usr/lib64", "/usr/local/include",
                                          "/usr/local/cuda*", "/opt/cuda*", "/opt/rocm*", "/usr/share/hip*"};
  return dirs;
}
}  // namespace

const std::vector<std::string>& system_include_dirs() { return mutable_system_include_dirs(); }

void add_system_include_dirs(const std::vector<std::string>& dirs) {
  auto& all = mutable_system_include_dirs();
  for (const auto& d : dirs)
    if (!d.empty() && std::find(all.begin(), all.end(), d) == all.end()) all.push_back(d);
}

bool may_include(const std::string& path, const std::string& repo_root, const std::vector<std::string>& allowed_dirs,
                 const std::vector<std::string>& allowed_files) {
  const fs::path lexical = fs::absolute(path).lexically_normal();
  const fs::path real = canonical_or_normal(path);
  for (const auto& f : allowed_files)
    if (canonical_or_normal(f) == real) return true;
  for (const auto& d : allowed_dirs)
    if (under(real, canonical_or_normal(d).string())) return true;
  if (under(real, canonical_or_normal(repo_root).string())) return false;
  for (const auto& s : system_include_dirs())
    if (under(real, s) || under(lexical, s)) return true;
  // A toolchain installed under /usr or /opt keeps its headers in an include/ directory
  // (e.g. /opt/gcc/lib/gcc/x86_64-linux-gnu/13/include): nobody's hand-in lives there.
  const std::string r = real.string();
  return (r.rfind("/usr/", 0) == 0 || r.rfind("/opt/", 0) == 0) && r.find("/include/") != std::string::npos;
}

std::string check_dependencies(const std::string& depfile, const std::string& repo_root,
                               const std::vector<std::string>& allowed_dirs,
                               const std::vector<std::string>& allowed_files) {
  const std::vector<std::string> deps = parse_depfile(read_text(depfile));
  if (deps.empty())
    return "cannot check what the submission includes: the compiler's dependency file " + depfile + " is missing or empty";
  std::string contract;
  for (const auto& f : allowed_files) {
    const std::string ext = fs::path(f).extension().string();
    if (ext == ".hpp" || ext == ".h" || ext == ".cuh") contract += (contract.empty() ? "" : ", ") + basename_of(f);
  }
  Offences offences;
  for (std::size_t i = 1; i < deps.size(); ++i) {
    const fs::path real = canonical_or_normal(deps[i]);
    bool ok = may_include(deps[i], repo_root, allowed_dirs, allowed_files);
    // nvcc spells the #line name of the hand-in only up to its first double quote (a folder named
    // `a"b` gives `a`): a name that is no file, but the start of the hand-in's own path, is that.
    if (!ok && !fs::exists(deps[i])) {
      std::string stem = deps[i];
      while (!stem.empty() && stem.back() == ' ') stem.pop_back();
      for (const auto& f : allowed_files)
        ok = ok || (!stem.empty() && f.rfind(stem, 0) == 0 && f.size() > stem.size() && f[stem.size()] == '"');
    }
    if (ok) continue;
    const auto [display, line] = include_site(deps[0], real.filename().string());
    offences.add(display + (line ? ":" + std::to_string(line) : "") + " includes " + real.string() +
                     ": a submission may include only its lab's contract header" +
                     (contract.empty() ? "" : " (" + contract + ")") + ", gpulab's headers and system headers",
                 Rule::files);
  }
  if (offences.lines.empty()) return {};
  return offences.message(
      "copy what you need into your own file; a kernel file needs only gpulab/gpu.hpp, gpulab/host.hpp "
      "and the contract header");
}

std::string check_library_headers(const std::string& depfile, const std::vector<std::string>& libraries) {
  if (libraries.empty()) return {};
  const std::vector<std::string> deps = parse_depfile(read_text(depfile));
  for (std::size_t i = 1; i < deps.size(); ++i) {
    const fs::path real = canonical_or_normal(deps[i]);
    for (const auto& part : real.parent_path()) {
      const auto hit = std::find(libraries.begin(), libraries.end(), part.string());
      if (hit == libraries.end()) continue;
      const auto [display, line] = include_site(deps[0], real.filename().string());
      Offences offences;
      offences.add(display + (line ? ":" + std::to_string(line) : "") + " includes " + real.string() +
                       ": this lab does not allow the " + *hit + " library (its algorithms are what the lab asks you to write)",
                   Rule::vendor_libraries);
      // The first header of the library is the one the hand-in names; the rest come with it.
      return offences.message("write the algorithm yourself: the lab's README explains it step by step");
    }
  }
  return {};
}

std::string check_object_symbols(const std::vector<std::string>& object_files,
                                 const std::vector<std::string>& contract_functions,
                                 const std::set<std::string>& protected_symbols, const std::string& display_name) {
  std::map<std::string, std::vector<Symbol>> symbols;
  std::map<std::string, Code> code;
  std::set<std::string> own;  // defined by one of the submission's objects
  for (const auto& o : object_files) {
    std::string error;
    if (!objects::read_symbols(o, false, symbols[o], error) || !objects::read_code(o, display_name, code[o], error))
      return "cannot check the symbols of " + display_name + " (" + o + "): " + error;
    for (const auto& s : symbols[o])
      if (s.type != 'U' && s.type != 'w' && s.type != 'v') own.insert(s.name);
  }
  Offences offences;
  for (const auto& o : object_files) {
    const Code& c = code[o];
    for (const auto& s : symbols[o]) {
      const bool undefined = s.type == 'U' || s.type == 'w' || s.type == 'v';
      const bool global = std::isupper(static_cast<unsigned char>(s.type)) || s.type == 'u' || s.type == 'i';
      if (undefined) {
        if (own.count(s.name) || objects::only_compiler_references(s.name, c)) continue;
        const Rule r = rules::classify_reference(s.name);
        if (r == Rule::allowed) continue;
        const int line = objects::reference_line(c, s.name);
        offences.add(display_name + (line ? ":" + std::to_string(line) : "") + " references " +
                         rules::demangle(s.name) +
                         ", which the grader does not allow: a submission may call only the GPU runtime, "
                         "gpulab's API, math, allocation and the C++ standard library (rule: " +
                         rules::rule_name(r) + ")",
                     r);
      } else if (global && s.type != 'N') {
        const Rule r = rules::classify_definition(s.name, s.type, contract_functions, protected_symbols);
        if (r == Rule::allowed) continue;
        offences.add(display_name + " defines " + rules::demangle(s.name) + ", which the grader does not allow: " +
                         definition_reason(s.name, s.type, r, protected_symbols) + " (rule: " +
                         rules::rule_name(r) + ")",
                     r);
      }
    }
    for (const auto& [insn, line] : c.raw_syscalls)
      offences.add(display_name + (line ? ":" + std::to_string(line) : "") +
                       " uses a raw system call instruction (" + insn +
                       "), which the grader does not allow (rule: " + rules::rule_name(Rule::system_calls) + ")",
                   Rule::system_calls);
  }
  return offences.lines.empty() ? std::string() : offences.message();
}

std::set<std::string> defined_symbols(const std::vector<std::string>& files) {
  std::set<std::string> out;
  for (const auto& f : files) {
    const std::string name = basename_of(f);  // lib.so, lib.so.1
    const bool shared = name.find(".so.") != std::string::npos || (name.size() > 3 && name.rfind(".so") == name.size() - 3);
    std::vector<Symbol> symbols;
    std::string error;
    if (!objects::read_symbols(f, shared, symbols, error, true)) throw std::runtime_error("cannot read the symbols of " + f + ": " + error);
    for (const auto& s : symbols) {
      if (!std::isupper(static_cast<unsigned char>(s.type)) && s.type != 'u' && s.type != 'i') continue;
      if (s.type == 'U' || s.type == 'N') continue;
      const bool weak = s.type == 'W' || s.type == 'V' || s.type == 'u';
      if (!weak || !rules::shared_weak_instance(s.name)) out.insert(s.name);
    }
  }
  return out;
}

}  // namespace gpulab::grade::vetting

namespace gpulab::grade::vetting {

std::set<std::string> library_c_names(const std::vector<std::string>& files) {
  static std::map<std::string, std::set<std::string>> cache;  // a grading run asks for the same libraries per lab
  std::set<std::string> out;
  for (const auto& f : files) {
    auto it = cache.find(f);
    if (it == cache.end()) {
      const std::string name = basename_of(f);
      const bool shared = name.find(".so.") != std::string::npos || (name.size() > 3 && name.rfind(".so") == name.size() - 3);
      std::vector<Symbol> symbols;
      std::string error;
      if (!objects::read_symbols(f, shared, symbols, error, true)) throw std::runtime_error("cannot read the symbols of " + f + ": " + error);
      std::set<std::string> names;
      for (const auto& s : symbols)
        // Defined or not (a name it may bind to); not the compilers' own (DW.ref.__gxx_personality_v0),
        // which every object defines alike.
        if (s.name.rfind("_Z", 0) != 0 && !rules::compiler_generated(s.name)) names.insert(s.name);
      it = cache.emplace(f, std::move(names)).first;
    }
    out.insert(it->second.begin(), it->second.end());
  }
  return out;
}

}  // namespace gpulab::grade::vetting
