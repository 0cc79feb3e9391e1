#include "handin.hpp"

#include "gpulab/grade/perfmodel.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/rubric.hpp"
#include "process.hpp"
#include "source_rules.hpp"
#include "tool_cache.hpp"
#include "vetting.hpp"

namespace fs = std::filesystem;

namespace gpulab::grade {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// The compile command CMake recorded for the lab's submission slot (compile_commands.json), with
/// the slot's file as its source argument. On the emu back-end a slot whose placeholder launches
/// with <<<>>> is compiled from its translation (cmake/GpulabBackend.cmake puts it under
/// cuda2emu/lab-<LAB>-submission/): that command is the slot's too.
std::vector<std::string> compile_command(const std::string& build_dir, const std::string& lab_id,
                                         const std::string& source_path) {
  std::ifstream in(build_dir + "/compile_commands.json");
  const nlohmann::json db = nlohmann::json::parse(in, nullptr, false);
  const std::string translated_dir = "/cuda2emu/lab-" + lab_id + "-submission/";
  const std::string slot_tail = "/submissions/" + lab_id + "/" + fs::path(source_path).filename().string();
  auto ends_with = [](const std::string& s, const std::string& t) {
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
  };
  if (db.is_array())
    for (const auto& e : db) {
      const std::string file = e.value("file", "");
      const bool translation = file.find(translated_dir) != std::string::npos && ends_with(file, slot_tail);
      if (file != source_path && !translation) continue;
      std::vector<std::string> cmd = e.contains("arguments") ? e["arguments"].get<std::vector<std::string>>()
                                                             : split_command(e.value("command", ""));
      for (auto& arg : cmd)
        if (arg == file) arg = source_path;
      return cmd;
    }
  throw std::runtime_error("no compile command for " + source_path + " in " + build_dir +
                           "/compile_commands.json (reconfigure the build)");
}

/// The link command of the lab's submission slot, as Ninja would run it.
std::vector<std::string> link_command(const std::string& build_dir, const std::string& target) {
  const ProcessResult r = run_process({"ninja", "-C", build_dir, "-t", "commands", target}, {}, 60);
  if (!r.ok()) throw std::runtime_error("cannot read the link command of " + target + ": " + tail_lines(r.output, 5));
  std::istringstream lines(r.output);
  std::string line, last;
  while (std::getline(lines, line))
    if (line.find(" -o ") != std::string::npos) last = line;
  // CMake wraps it as ": && <link> && :".
  if (last.rfind(": && ", 0) == 0) last.erase(0, 5);
  const auto tail = last.rfind(" && :");
  if (tail != std::string::npos) last.erase(tail);
  if (last.find("&&") != std::string::npos || last.empty())
    throw std::runtime_error("unexpected link command for " + target + ": " + last);
  // CMake 3.27+ asks the linker for a dependency file inside the build tree (LINKER_DEPFILE):
  // the hand-in is linked elsewhere, and nothing reads that file, so the option goes.
  std::vector<std::string> args;
  for (auto& a : split_command(last))
    if (a.rfind("-Wl,--dependency-file", 0) != 0) args.push_back(std::move(a));
  return args;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}


/// The C++ compiler behind a compile or link command: nvcc's host compiler (its -ccbin, else g++).
std::string host_compiler(const std::vector<std::string>& cmd) {
  std::string compiler = cmd.empty() ? "c++" : cmd[0];
  if (fs::path(compiler).filename() == "nvcc") {
    compiler = "g++";
    for (std::size_t i = 0; i + 1 < cmd.size(); ++i)
      if (cmd[i] == "-ccbin" || cmd[i] == "--compiler-bindir") compiler = cmd[i + 1];
  }
  return compiler;
}

/// The directories a compiler searches for <...> headers by itself (its own and the system's),
/// from `compiler -E -v`: a toolchain under /opt has its headers there. nvcc's host compiler is
/// asked, since the headers nvcc reads are the host compiler's.
std::vector<std::string> compiler_search_dirs(const std::vector<std::string>& cmd) {
  const std::string compiler = host_compiler(cmd);
  static std::map<std::string, std::vector<std::string>> cache;
  if (auto it = cache.find(compiler); it != cache.end()) return it->second;
  const std::vector<std::string> argv{"sh", "-c", "\"$0\" -E -x c++ -v /dev/null 2>&1 >/dev/null", compiler};
  const std::optional<std::string> said = tool_cache::output(argv, {compiler}, [&] {
    return std::optional<std::string>(run_process(argv, {}, 60).output);
  });
  std::vector<std::string> dirs;
  std::istringstream in(*said);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("#include <...> search starts here") != std::string::npos) inside = true;
    else if (line.find("End of search list") != std::string::npos) inside = false;
    else if (inside && line.size() > 1 && line[0] == ' ') {
      std::string d = line.substr(1);
      if (const auto f = d.find(" (framework directory)"); f != std::string::npos) d.erase(f);
      std::error_code ec;
      const fs::path c = fs::canonical(d, ec);
      dirs.push_back(ec ? d : c.string());
    }
  }
  return cache[compiler] = dirs;
}

/// What a hand-in may read (vetting::may_include): its own file (also by its #line name, as
/// nvcc names it), its lab's headers, gpulab's headers, its staging directory, system headers.
struct Readable {
  std::vector<std::string> dirs, files;
  bool operator()(const std::string& path) const { return vetting::may_include(path, GPULAB_SOURCE_DIR, dirs, files); }
};

Readable readable_by(const LabInfo& lab, const std::string& handin, const std::string& work_dir) {
  // (`handin`: its #line name; the staged copy is in the staging directory)
  Readable r;
  r.dirs = {std::string(GPULAB_SOURCE_DIR) + "/common/include", std::string(GPULAB_SOURCE_DIR) + "/common/emu/include",
            work_dir + "/src"};
  for (const auto& e : fs::directory_iterator(lab.lab_dir))
    if (e.path().extension() == ".hpp" || e.path().extension() == ".h") r.files.push_back(e.path().string());
  r.files.push_back(handin);
  return r;
}

/// The name a compiled file gives the compiler's messages: the path of a staged copy's leading
/// #line directive (vetting::staged_text), unescaped; the file's own for the reference's.
std::string own_name(const std::string& file) {
  std::ifstream in(file);
  std::string first, name;
  std::getline(in, first);
  if (first.rfind("#line 1 \"", 0) != 0) return file;
  for (std::size_t i = 9; i < first.size() && first[i] != '"'; ++i)
    name += first[i] == '\\' && i + 1 < first.size() ? first[++i] : first[i];
  return name;
}

/// The file nvcc compiles for `file`. A staged copy's #line directive names the hand-in's own
/// path, which may hold characters ptxas cannot read back from the PTX's .file directive (a quote,
/// a backslash): nvcc gets a copy in `dir` named by that path's base name with them replaced by
/// '_' (as the kit replaces them in the emulator's counted lines), without the directive: its
/// lines are the hand-in's, numbered as the emulator counts them (and as the host compiler quotes
/// them in its messages). The reference's files are compiled as they are.
std::string nvcc_input(const std::string& file, const std::string& dir) {
  const std::string name = own_name(file);
  if (name == file) return file;
  std::string base = fs::path(name).filename().string();
  if (base.empty()) base = fs::path(file).filename().string();
  std::replace_if(base.begin(), base.end(), [](char c) { return c == '"' || c == '\\'; }, '_');
  std::string text = read_text(file);
  const std::size_t first_line_end = text.find('\n');
  text.erase(0, first_line_end == std::string::npos ? text.size() : first_line_end + 1);
  fs::create_directories(dir);
  std::ofstream(dir + "/" + base, std::ios::binary) << text;
  return dir + "/" + base;
}

/// The compiler's output without the text of files the hand-in may not read: a message located
/// in such a file (an `#include "/etc/passwd"` makes the compiler quote its lines) is left out
/// with the lines that follow it (the quoted source, the caret), and counted. `cwd`: where the
/// compiler ran (relative paths).
std::string shown_diagnostics(const std::string& output, const Readable& readable, const std::string& cwd) {
  if (!defence_enabled("compiler-output")) return output;
  static const std::regex located(R"(^(.+?)(?::\d+(?::\d+)?|\(\d+\)): (fatal error|error|warning|note|remark))");
  static const std::regex inclusion(R"(^(In file included from |\s+from |In module ))");
  std::map<std::string, int> hidden;
  std::istringstream in(output);
  std::string shown;
  bool hiding = false;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, located)) {
      const fs::path file = m[1].str();
      hiding = !readable((file.is_absolute() ? file : fs::path(cwd) / file).string());
      if (hiding) ++hidden[m[1].str()];
    } else if (std::regex_search(line, inclusion)) {
      hiding = false;  // where an #include is: paths and line numbers only
    }
    if (!hiding) shown += line + "\n";
  }
  for (const auto& [file, n] : hidden)
    shown += file + ": note: " + std::to_string(n) + " compiler message(s) about this file are not shown: the grader"
             " shows compiler output only for your file, your lab's headers, gpulab's headers and system headers\n";
  return shown;
}

/// The include rules on a compilation's dependency list: the files a hand-in may read, and no
/// header of a library its lab forbids. Empty when all is well.
std::string includes_problem(const LabInfo& lab, const Readable& readable, const std::string& deps,
                             const std::vector<std::string>& cmd) {
  if (!defence_enabled("includes")) return {};
  vetting::add_system_include_dirs(compiler_search_dirs(cmd));
  if (const std::string bad = vetting::check_dependencies(deps, GPULAB_SOURCE_DIR, readable.dirs, readable.files);
      !bad.empty())
    return bad;
  std::vector<std::string> forbidden;
  std::istringstream names(Rubric::load(lab.rubric).text("lab", "forbidden_libraries").value_or(""));
  for (std::string name; names >> name;) forbidden.push_back(name);
  return vetting::check_library_headers(deps, forbidden);
}

/// Whether `path` is an ELF file or an archive (not a linker script such as libc.so).
bool object_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, sizeof magic);
  return std::string(magic, 4) == "\x7f""ELF" || std::string(magic, 8) == "!<arch>\n";
}

/// The libraries a runner linked by `link` binds to: the command's archives and shared libraries
/// (paths, and -l names looked up in its -L directories and the compiler's own), and those every
/// C++ program gets (the C library, libm, libstdc++, libgcc_s, the dynamic loader). Their C-linkage
/// names are what a submission's C-linkage definition could take the place of.
std::vector<std::string> linked_libraries(const std::vector<std::string>& link, const std::string& build_dir) {
  const std::string compiler = host_compiler(link);
  auto print = [&](const std::string& option) {
    std::string out = tool_cache::output({compiler, option}, {compiler}, [&] {
                        const ProcessResult r = run_process({compiler, option}, {}, 60);
                        return r.ok() ? std::optional<std::string>(r.output) : std::nullopt;
                      }).value_or("");
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
  };
  std::vector<std::string> dirs, names, files;
  for (const auto& arg : link) {
    if (arg.rfind("-L", 0) == 0 && arg.size() > 2) dirs.push_back(arg.substr(2));
    else if (arg.rfind("-l", 0) == 0 && arg.size() > 2) names.push_back(arg.substr(2));
    else if (!arg.empty() && arg[0] != '-' && (ends_with(arg, ".a") || ends_with(arg, ".so") || arg.find(".so.") != std::string::npos))
      files.push_back(fs::path(arg).is_absolute() ? arg : build_dir + "/" + arg);
  }
  std::istringstream search(print("-print-search-dirs"));
  for (std::string line; std::getline(search, line);)
    if (line.rfind("libraries: =", 0) == 0) {
      std::istringstream parts(line.substr(12));
      for (std::string d; std::getline(parts, d, ':');) dirs.push_back(d);
    }
  for (const auto& n : names)
    for (const auto& d : dirs) {
      const std::string base = d + "/" + (n[0] == ':' ? n.substr(1) : "lib" + n);
      if (n[0] == ':' ? object_file(base) : object_file(base + ".so") || object_file(base + ".a")) {
        files.push_back(n[0] == ':' ? base : object_file(base + ".so") ? base + ".so" : base + ".a");
        break;
      }
    }
  for (const char* implicit : {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"})
    files.push_back(print(std::string("-print-file-name=") + implicit));
  std::vector<std::string> out;
  for (const auto& f : files) {
    std::error_code ec;
    const std::string real = fs::canonical(f, ec).string();
    if (!ec && object_file(real) && std::find(out.begin(), out.end(), real) == out.end()) out.push_back(real);
  }
  return out;
}

HandinBuild failed(const std::string& message, const std::string& isolation = "") {
  HandinBuild b;
  b.message = message;
  b.isolation = isolation;
  return b;
}

}  // namespace

/// Compiler and linker lines worth showing (handin.hpp).
std::string compiler_errors(const std::string& output) {
  // A message with its place: gcc and clang "file:line[:col]: kind:", nvcc "file(line): kind".
  static const std::regex located(R"(^(.+?)(:\d+(:\d+)?|\(\d+\)): (fatal error|error|warning|note|remark)\b)");
  std::istringstream in(output);
  std::string line, errors;
  int kept = 0;
  bool keeping = false;  // the lines that follow (the source quoted, the caret) belong to a shown error
  while (std::getline(in, line) && kept < 25) {
    std::smatch m;
    bool show = false;
    if (std::regex_search(line, m, located)) {
      const std::string kind = m[4].str();
      // An error, and the notes that follow it; a warning is not why the build failed.
      keeping = kind == "error" || kind == "fatal error" || (kind == "note" && keeping);
      show = keeping;
    } else if (line.find("undefined reference") != std::string::npos ||
               line.find("multiple definition") != std::string::npos || line.find("error") != std::string::npos) {
      keeping = show = true;  // the linker's causes, "collect2: error", a ptxas error
    } else if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      show = keeping;
    } else {
      keeping = false;  // "In file included from", a summary line
    }
    if (show) {
      errors += line + "\n";
      ++kept;
    }
  }
  return errors.empty() ? tail_lines(output, 25) : errors;
}


std::vector<std::string> split_command(const std::string& command) {
  std::vector<std::string> out;
  std::string cur;
  bool in_token = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < command.size()) cur += command[++i];
      else cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_token = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      cur += command[++i];
      in_token = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_token) out.push_back(cur);
      cur.clear();
      in_token = false;
    } else {
      cur += c;
      in_token = true;
    }
  }
  if (in_token) out.push_back(cur);
  return out;
}

ProcessResult confined(const std::vector<std::string>& argv, const SandboxSpec& spec, bool echo) {
  return run_sandboxed(defence_enabled("sandbox") ? best_isolation() : Isolation::rlimits, argv, spec, echo);
}

SandboxSpec base_sandbox(const std::string& build_dir, const std::string& writable, double timeout_seconds) {
  SandboxSpec spec;
  spec.read_only = {GPULAB_SOURCE_DIR, build_dir};
  for (const char* toolkit : {"/usr/local/cuda", "/opt/rocm", "/opt/nvidia"})
    if (fs::exists(toolkit)) spec.read_only.push_back(fs::canonical(toolkit).string());
  spec.writable = {writable};
  spec.env = {{"PATH", "/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin"}, {"HOME", writable},
              {"TMPDIR", "/tmp"}, {"LANG", "C.UTF-8"}};
  spec.workdir = writable;
  spec.timeout_seconds = timeout_seconds;
  if (const std::string off = emulator_defences_off(); !off.empty()) spec.env["GPULAB_EMU_DISABLE"] = off;
  return spec;
}

namespace {

/// The nvcc that the emulator's grade asks: GPULAB_NVCC in the grader's environment where it names
/// one (a toolkit elsewhere than the usual places), else the CUDA Toolkit's, else the system's; ""
/// where there is none.
std::string find_nvcc() {
  if (const char* chosen = std::getenv("GPULAB_NVCC"); chosen && *chosen)
    return fs::path(chosen).is_absolute() && ::access(chosen, X_OK) == 0 ? chosen : "";
  for (const std::string& candidate : {std::string("/usr/local/cuda/bin/nvcc"), std::string("/usr/bin/nvcc")})
    if (fs::exists(candidate)) return candidate;
  return "";
}

/// Each kernel's load groups (bytes a thread loads per trip), by its mangled name.
using LoadGroups = std::map<std::string, std::vector<gpulab::grade::perfmodel::PtxLoadGroup>>;

/// The load groups of the PTX that nvcc kept in `keep` for `file` (none where it kept no PTX).
LoadGroups ptx_load_groups(const std::string& keep, const std::string& file) {
  LoadGroups loads;
  std::ifstream ptx_file(keep + "/" + fs::path(file).stem().string() + ".ptx");
  if (ptx_file) {
    std::stringstream ptx;
    ptx << ptx_file.rdbuf();
    for (auto& k : gpulab::grade::perfmodel::ptx_loads(ptx.str())) loads[k.kernel] = std::move(k.groups);
  }
  return loads;
}

/// Adds to `kernels` each kernel that ptxas's --resource-usage lines in `output` name, with its load groups.
void add_kernels(const std::string& output, const LoadGroups& loads, nlohmann::json& kernels) {
  using nlohmann::json;
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex used(R"(Used (\d+) registers(?:.*?(\d+) bytes smem)?)");
  std::istringstream lines(output);
  std::string current;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      current = m[1].str();
    } else if (!current.empty() && std::regex_search(line, m, used)) {
      int status = 0;
      char* demangled = abi::__cxa_demangle(current.c_str(), nullptr, nullptr, &status);
      json k = {{"kernel", status == 0 && demangled ? std::string(demangled) : current},
                {"registers", std::stoi(m[1].str())},
                {"shared_bytes", m[2].matched ? std::stoll(m[2].str()) : 0LL}};
      if (const auto it = loads.find(current); it != loads.end()) {
        json groups = json::array();
        for (const auto& g : it->second)
          groups.push_back({{"bytes", g.bytes}, {"loads", g.loads}, {"in_loop", g.in_loop}, {"lines", g.lines},
                            {"places", g.places}});
        k["load_groups"] = groups;
      }
      kernels.push_back(k);
      std::free(demangled);
      current.clear();
    }
  }
}

}  // namespace

std::string kernel_resources(const std::string& build_dir, const LabInfo& lab, const std::vector<std::string>& files,
                             const std::string& work_dir, const std::string& arch, double timeout_seconds,
                             bool verbose) {
  using nlohmann::json;
  // "nvcc": "absent" and "unusable" (it does not compile the lab's reference either) are this
  // machine's lack (the grades that need nvcc are made without it, as the rubrics say); "failed"
  // is the hand-in's (kit::nvcc_view; the emulator's grade fails it: labs.cpp).
  auto unavailable = [](const std::string& why, const char* nvcc) {
    return json{{"not_measured", why}, {"nvcc", nvcc}}.dump();
  };
  const std::string nvcc = find_nvcc();
  if (nvcc.empty())
    return unavailable("no nvcc on this machine: the emulator's performance grade predicts a GPU's speed from the"
                       " kernels' registers, which nvcc reports (install the CUDA Toolkit; compiling is enough, no GPU"
                       " is needed)",
                       "absent");
  const std::string tmp = work_dir + "/nvcc-tmp";
  fs::create_directories(tmp);
  SandboxSpec spec = base_sandbox(build_dir, work_dir, timeout_seconds);
  spec.address_space_bytes = std::size_t{8} << 30;
  spec.file_size_bytes = std::size_t{512} << 20;
  spec.env["TMPDIR"] = tmp;
  json kernels = json::array();
  for (const std::string& compiled : files) {
    const std::string file = nvcc_input(compiled, work_dir + "/src/nvcc");
    // The device side only (-cubin: registers and PTX are the device compile's; the host side would
    // cost twice as much again). The intermediate files kept: the PTX (with its source lines), whose
    // loops say how many bytes a thread loads per trip.
    const std::string keep = tmp + "/keep-" + fs::path(file).stem().string();
    fs::create_directories(keep);
    auto compile = [&](const std::string& source, const std::string& dir) {
      return confined({nvcc, "-std=c++17", "--extended-lambda", "-O3", "-arch=" + arch, "-cubin", "--resource-usage", "-o",
                       "/dev/null", "-lineinfo", "--keep", "--keep-dir", keep, "-I",
                       std::string(GPULAB_SOURCE_DIR) + "/common/include", "-I", lab.lab_dir, "-I", dir, "-x", "cu", source},
                      spec, verbose);
    };
    const ProcessResult r = compile(file, fs::path(compiled).parent_path().string());
    if (!r.ok()) {
      // Whose fault: the hand-in's only where this nvcc compiles the lab's reference, the same
      // way; an nvcc too old for the flags or the headers fails every file, and no hand-in is
      // to blame for that.
      const std::string source = fs::path(compiled).filename().string();
      const std::string reference = lab.solution_dir + "/" + source;
      if (compiled == reference || !fs::is_regular_file(reference) || !compile(reference, lab.solution_dir).ok())
        return unavailable("this machine's nvcc (" + nvcc + ") does not compile the lab's reference " + source + " for " +
                               arch + " either: the grade is made as without nvcc (a CUDA Toolkit that supports " +
                               arch + " and C++17 would give it)",
                           "unusable");
      // Its messages name the hand-in as the emulator's build does, not nvcc's copy of it.
      // From its first error on (what follows it is notes on that error): the tail alone may be notes.
      std::string said = shown_diagnostics(r.output, readable_by(lab, file, work_dir), build_dir);
      if (const std::size_t error = said.find(": error"); error != std::string::npos) {
        const std::size_t line = said.rfind('\n', error);
        said.erase(0, line == std::string::npos ? 0 : line + 1);
      }
      std::size_t end = 0;
      for (int line = 0; line < 10 && end != std::string::npos; ++line) end = said.find('\n', end == 0 ? 0 : end + 1);
      said = tail_lines(said.substr(0, end), 10);
      const std::string own = own_name(compiled);
      for (std::size_t at = 0; file != own && (at = said.find(file, at)) != std::string::npos; at += own.size())
        said.replace(at, file.size(), own);
      return unavailable("nvcc could not compile " + fs::path(own).filename().string() + " for " + arch + " (" +
                             r.describe() + "):\n" + said,
                         "failed");
    }
    const LoadGroups loads = ptx_load_groups(keep, file);
    std::error_code ignored;
    fs::remove_all(keep, ignored);
    add_kernels(r.output, loads, kernels);
  }
  return json{{"arch", arch}, {"kernels", kernels}}.dump();
}

namespace {

/// A hand-in's build in progress: what build_handin's steps share.
struct Build {
  Build(const std::string& build, const LabInfo& l, const std::vector<std::string>& f, const std::string& work,
        double timeout, bool v)
      : build_dir(build),
        lab(l),
        files(f),
        work_dir(work),
        timeout_seconds(timeout),
        verbose(v),
        spec(base_sandbox(build, work, timeout)) {}

  const std::string& build_dir;
  const LabInfo& lab;
  const std::vector<std::string>& files;
  const std::string& work_dir;
  double timeout_seconds;
  bool verbose;
  SandboxSpec spec;                  ///< where the compiler, the linker and the tools run
  std::string isolation;             ///< how the last of them ran
  std::vector<std::string> objects;  ///< the hand-in's object files, in the order of the lab's sources
  std::vector<std::string> link;     ///< the runner's link command
  std::string runner;                ///< the executable it makes
  std::vector<std::string> ours;     ///< the build's own objects and libraries that the runner links
};

/// One of the hand-in's files on its way to an object file: what compile_source's steps share.
struct Unit {
  Unit(const Build& b, std::size_t k)
      : source(b.lab.sources[k]),
        file(b.files[k]),
        staged(b.work_dir + "/src/" + source),
        text(read_text(file)),
        object(b.work_dir + "/obj/" + source + ".o"),
        deps(b.work_dir + "/obj/" + source + ".d") {}

  const std::string source;  ///< the lab's name for it
  const std::string file;    ///< the hand-in's file
  const std::string staged;  ///< the copy that is compiled
  const std::string text;    ///< the hand-in's text
  const std::string object, deps;
  std::vector<std::string> cmd;  ///< its compile command
  std::string line_name;         ///< the name the staged copy's #line gives the hand-in
};

/// Writes the staged copy and makes its compile command; a failure where the hand-in's text breaks a rule.
std::optional<HandinBuild> stage_source(const Build& b, Unit& u) {
  if (defence_enabled("source-text"))
    if (const std::string bad = source_rules::check_source(u.text, fs::path(u.file).filename().string()); !bad.empty())
      return failed(bad);
  u.cmd = compile_command(b.build_dir, b.lab.id, b.lab.submission_dir + "/" + u.source);
  // The name the staged copy's #line gives the hand-in. nvcc (-lineinfo) writes it into the
  // PTX's .file directive, which ptxas cannot read back with a quote or a backslash in it: for
  // nvcc they become '_' (a hand-in in such a folder is no less a hand-in).
  u.line_name = u.file;
  if (!u.cmd.empty() && fs::path(u.cmd[0]).filename() == "nvcc")
    std::replace_if(u.line_name.begin(), u.line_name.end(), [](char c) { return c == '"' || c == '\\'; }, '_');
  std::ofstream(u.staged, std::ios::binary)
      << (defence_enabled("staging") ? vetting::staged_text(u.text, u.line_name)
                                     : "#line 1 \"" + u.file + "\"\n" + u.text);  // unescaped, BOM kept
  for (std::size_t i = 0; i + 1 < u.cmd.size(); ++i)
    if (u.cmd[i] == "-o") u.cmd[i + 1] = u.object;
  for (auto& arg : u.cmd)
    if (arg == b.lab.submission_dir + "/" + u.source) arg = u.staged;
  u.cmd.insert(u.cmd.begin() + 1, {"-MD", "-MF", u.deps});
  return std::nullopt;
}

/// On the emu back-end, translates a hand-in that launches with <<<>>> and compiles that instead; or the failure.
std::optional<HandinBuild> translate_launches(Build& b, Unit& u) {
  // On the emulator a hand-in that launches with `<<<>>>` is compiled from its translation, made
  // in the sandbox by the build's gpulab-cuda2emu, as CMake does for the lab's own files
  // (cmake/GpulabBackend.cmake). The translation keeps every line's file and number.
  const bool emu =
      fs::path(u.cmd[0]).filename() != "nvcc" && std::find(u.cmd.begin(), u.cmd.end(), "hip") == u.cmd.end();
  static const std::regex dynamic_shared(R"(extern\s+__shared__)");
  if (emu && (u.text.find("<<<") != std::string::npos || std::regex_search(u.text, dynamic_shared))) {
    const std::string tool = b.build_dir + "/common/emu/cuda2emu/gpulab-cuda2emu";
    if (!fs::exists(tool))
      return failed(fs::path(u.file).filename().string() +
                    " launches kernels with <<<>>>, which the emu back-end translates with gpulab-cuda2emu, and "
                    "this build has none (" + tool + ")\n  hint: build it: cmake --build " + b.build_dir +
                    " --target gpulab-cuda2emu");
    const std::string translated = b.work_dir + "/src/" + fs::path(u.source).stem().string() + ".emu" +
                                   fs::path(u.source).extension().string();
    const ProcessResult tr = confined({tool, u.staged, "-o", translated}, b.spec, b.verbose);
    b.isolation = tr.isolation;
    if (tr.timed_out || !tr.ok()) {
      // The tool names the staged copy, whose first line is the #line directive it starts with.
      std::istringstream lines(shown_diagnostics(tr.output, readable_by(b.lab, u.file, b.work_dir), b.build_dir));
      std::string why;
      for (std::string line; std::getline(lines, line) && why.size() < 4000;) {
        int n = 0;
        if (line.rfind(u.staged + ":", 0) == 0 &&
            std::sscanf(line.c_str() + u.staged.size() + 1, "%d", &n) == 1 && n > 1)
          line = fs::path(u.file).filename().string() + ":" + std::to_string(n - 1) +
                 line.substr(line.find(':', u.staged.size() + 1));
        why += "  " + line + "\n";
      }
      return failed("the <<<>>> launches cannot be translated for the emulator (" + tr.describe() + "):\n" + why,
                    b.isolation);
    }
    for (auto& arg : u.cmd)
      if (arg == u.staged) arg = translated;
  }
  return std::nullopt;
}

/// The source-text rule on the preprocessed text of the hand-in's own lines (not for nvcc); "" when all is well.
std::string preprocessed_problem(const Build& b, const Unit& u) {
  // The same rule on the preprocessed text of the hand-in's own lines: a word built by token
  // pasting or hidden behind a line splice is spelt out there (clang and hipcc; nvcc's objects
  // are checked for system-call instructions instead).
  if (!defence_enabled("source-text") || fs::path(u.cmd[0]).filename() == "nvcc") return {};
  std::vector<std::string> pre;
  for (std::size_t i = 0; i < u.cmd.size(); ++i) {
    if (u.cmd[i] == "-MD") { i += 2; continue; }       // -MD -MF deps
    if (u.cmd[i] == "-o") { pre.push_back("-o"); pre.push_back(b.work_dir + "/obj/" + u.source + ".i"); ++i; continue; }
    pre.push_back(u.cmd[i] == "-c" ? "-E" : u.cmd[i]);
  }
  const ProcessResult pp = confined(pre, b.spec, false);
  if (!pp.ok()) return {};
  std::istringstream in(read_text(b.work_dir + "/obj/" + u.source + ".i"));
  std::string line, current, own;
  const std::regex marker(R"re(^# \d+ "(.*)")re");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, marker)) { current = m[1].str(); own += "\n"; continue; }
    own += (current == u.file || current.find(fs::path(u.file).filename().string()) != std::string::npos)
               ? line + "\n" : "\n";
  }
  return source_rules::check_preprocessed(own, fs::path(u.file).filename().string());
}

/// Stages, compiles and vets the hand-in's file `k`, adding its object to b.objects; or the failure.
std::optional<HandinBuild> compile_source(Build& b, std::size_t k) {
  Unit u(b, k);
  if (std::optional<HandinBuild> failure = stage_source(b, u)) return failure;
  b.spec.workdir = b.build_dir;  // the command's relative paths are the build tree's
  if (std::optional<HandinBuild> failure = translate_launches(b, u)) return failure;
  const ProcessResult cc = confined(u.cmd, b.spec, b.verbose);
  b.isolation = cc.isolation;
  if (cc.timed_out)
    return failed("compiling " + u.source + " did not finish within " + std::to_string(int(b.timeout_seconds)) +
                      " s (the build's time limit)\n  hint: a template or constexpr computation that never ends?",
                  b.isolation);
  Readable readable = readable_by(b.lab, u.file, b.work_dir);
  readable.files.push_back(u.line_name);  // the name the compiler knows it by
  if (!cc.ok()) {
    // The include rules first (the dependency list is written on errors too): a file the
    // hand-in may not read never reaches its messages.
    if (const std::string bad = fs::exists(u.deps) ? includes_problem(b.lab, readable, u.deps, u.cmd) : "";
        !bad.empty())
      return failed(bad, b.isolation);
    return failed("the code does not compile (" + cc.describe() + "):\n" +
                      compiler_errors(shown_diagnostics(cc.output, readable, b.build_dir)),
                  b.isolation);
  }
  if (const std::string bad = preprocessed_problem(b, u); !bad.empty()) return failed(bad, b.isolation);
  if (const std::string bad = includes_problem(b.lab, readable, u.deps, u.cmd); !bad.empty())
    return failed(bad, b.isolation);
  b.objects.push_back(u.object);
  return std::nullopt;
}

/// Points b.link at the hand-in's objects and b.runner, noting b.ours; returns how many slot objects it replaced.
std::size_t aim_link(Build& b) {
  std::size_t replaced = 0;
  for (std::size_t i = 0; i < b.link.size(); ++i) {
    std::string& arg = b.link[i];
    if (i > 0 && b.link[i - 1] == "-o") {
      arg = b.runner;
      continue;
    }
    for (std::size_t k = 0; k < b.lab.sources.size(); ++k)
      if (ends_with(arg, "/submissions/" + b.lab.id + "/" + b.lab.sources[k] + ".o")) {
        arg = b.objects[k];
        ++replaced;
      }
    if (arg[0] != '-' && (ends_with(arg, ".o") || ends_with(arg, ".a") || ends_with(arg, ".so")) &&
        std::find(b.objects.begin(), b.objects.end(), arg) == b.objects.end()) {
      const fs::path p = fs::path(arg).is_absolute() ? fs::path(arg) : fs::path(b.build_dir) / arg;
      if (p.string().rfind(b.build_dir, 0) == 0) b.ours.push_back(p.string());
    }
  }
  return replaced;
}

/// The symbol rules on the hand-in's objects (the lab's contract, nothing the runner has); "" when all is well.
std::string symbols_problem(const Build& b) {
  std::vector<std::string> contract;
  for (const auto& f : b.lab.functions) contract.push_back(f);
  // What the submission may not define: the strong symbols of the build's own objects and
  // libraries, and every C-linkage name of any library the runner is linked with.
  std::set<std::string> taken = vetting::defined_symbols(b.ours);
  const std::set<std::string> c_names = vetting::library_c_names(linked_libraries(b.link, b.build_dir));
  taken.insert(c_names.begin(), c_names.end());
  return vetting::check_object_symbols(b.objects, contract, taken, fs::path(b.files[0]).filename().string());
}

/// Links the runner from the hand-in's objects, its symbols vetted first.
HandinBuild link_runner(Build& b) {
  // Link: the lab's checks and the harness, exactly as CMake links the submission slot.
  const std::string target = "lab-" + b.lab.id + "-submission";
  b.link = link_command(b.build_dir, target);
  b.runner = b.work_dir + "/runner";
  if (aim_link(b) != b.objects.size())
    return failed("grader error: the link command of " + target + " has no slot", b.isolation);

  if (defence_enabled("symbols"))
    if (const std::string bad = symbols_problem(b); !bad.empty()) return failed(bad, b.isolation);

  const ProcessResult ld = confined(b.link, b.spec, b.verbose);
  if (!ld.ok())
    return failed("the code does not link (" + ld.describe() + "):\n" + compiler_errors(ld.output) +
                      "  hint: the lab's header declares the function(s) you must define, with exactly that signature",
                  b.isolation);
  HandinBuild built;
  built.ok = true;
  built.executable = b.runner;
  built.isolation = b.isolation;
  return built;
}

}  // namespace

HandinBuild build_handin(const std::string& build_dir, const LabInfo& lab, const std::vector<std::string>& files,
                         const std::string& work_dir, double timeout_seconds, bool verbose) {
  fs::create_directories(work_dir + "/src");
  fs::create_directories(work_dir + "/obj");
  // The compiler, the linker and the tools run in the sandbox, with limits: a compile-time bomb
  // (deep templates, a huge constant array) stops at the time or memory limit.
  Build b(build_dir, lab, files, work_dir, timeout_seconds, verbose);
  b.spec.address_space_bytes = std::size_t{8} << 30;
  b.spec.file_size_bytes = std::size_t{512} << 20;

  for (std::size_t k = 0; k < lab.sources.size(); ++k)
    if (std::optional<HandinBuild> failure = compile_source(b, k)) return *failure;
  return link_runner(b);
}

}  // namespace gpulab::grade
