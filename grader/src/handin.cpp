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
/// '_' (as the kit replaces them in the emulator's counted lines), its first line `#line 1`, so
/// that its lines stay those the emulator counts. The reference's files are compiled as they are.
std::string nvcc_input(const std::string& file, const std::string& dir) {
  const std::string name = own_name(file);
  if (name == file) return file;
  std::string base = fs::path(name).filename().string();
  if (base.empty()) base = fs::path(file).filename().string();
  std::replace_if(base.begin(), base.end(), [](char c) { return c == '"' || c == '\\'; }, '_');
  std::string text = read_text(file);
  text.replace(0, text.find('\n'), "#line 1");
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

std::string kernel_resources(const std::string& build_dir, const LabInfo& lab, const std::vector<std::string>& files,
                             const std::string& work_dir, const std::string& arch, double timeout_seconds,
                             bool verbose) {
  using nlohmann::json;
  // "nvcc": "absent" is this machine's lack (the grades that need nvcc are made without it, as
  // the rubrics say); "failed" is the hand-in's (kit::nvcc_view).
  auto unavailable = [](const std::string& why, const char* nvcc) {
    return json{{"not_measured", why}, {"nvcc", nvcc}}.dump();
  };
  std::string nvcc;
  for (const std::string& candidate : {std::string("/usr/local/cuda/bin/nvcc"), std::string("/usr/bin/nvcc")})
    if (fs::exists(candidate)) {
      nvcc = candidate;
      break;
    }
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
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex used(R"(Used (\d+) registers(?:.*?(\d+) bytes smem)?)");
  for (const std::string& compiled : files) {
    const std::string file = nvcc_input(compiled, work_dir + "/src/nvcc");
    // The device side only (-cubin: registers and PTX are the device compile's; the host side would
    // cost twice as much again). The intermediate files kept: the PTX (with its source lines), whose
    // loops say how many bytes a thread loads per trip.
    const std::string keep = tmp + "/keep-" + fs::path(file).stem().string();
    fs::create_directories(keep);
    const ProcessResult r =
        confined({nvcc, "-std=c++17", "-O3", "-arch=" + arch, "-cubin", "--resource-usage", "-o", "/dev/null", "-lineinfo", "--keep",
                  "--keep-dir", keep, "-I", std::string(GPULAB_SOURCE_DIR) + "/common/include", "-I", lab.lab_dir, "-I",
                  fs::path(compiled).parent_path().string(), "-x", "cu", file},
                 spec, verbose);
    if (!r.ok())
      return unavailable("nvcc could not compile " + fs::path(file).filename().string() + " for " + arch +
                             " to count its registers (" + r.describe() + "):\n" +
                             tail_lines(shown_diagnostics(r.output, readable_by(lab, file, work_dir), build_dir), 8),
                         "failed");
    std::map<std::string, std::vector<gpulab::grade::perfmodel::PtxLoadGroup>> loads;
    std::ifstream ptx_file(keep + "/" + fs::path(file).stem().string() + ".ptx");
    if (ptx_file) {
      std::stringstream ptx;
      ptx << ptx_file.rdbuf();
      for (auto& k : gpulab::grade::perfmodel::ptx_loads(ptx.str())) loads[k.kernel] = std::move(k.groups);
    }
    std::error_code ignored;
    fs::remove_all(keep, ignored);
    std::istringstream lines(r.output);
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
  return json{{"arch", arch}, {"kernels", kernels}}.dump();
}

HandinBuild build_handin(const std::string& build_dir, const LabInfo& lab, const std::vector<std::string>& files,
                         const std::string& work_dir, double timeout_seconds, bool verbose) {
  fs::create_directories(work_dir + "/src");
  fs::create_directories(work_dir + "/obj");
  // The compiler, the linker and the tools run in the sandbox, with limits: a compile-time bomb
  // (deep templates, a huge constant array) stops at the time or memory limit.
  SandboxSpec spec = base_sandbox(build_dir, work_dir, timeout_seconds);
  spec.address_space_bytes = std::size_t{8} << 30;
  spec.file_size_bytes = std::size_t{512} << 20;

  std::vector<std::string> objects;
  std::string isolation;
  for (std::size_t k = 0; k < lab.sources.size(); ++k) {
    const std::string& source = lab.sources[k];
    const std::string staged = work_dir + "/src/" + source;
    const std::string text = read_text(files[k]);
    if (defence_enabled("source-text"))
      if (const std::string bad = source_rules::check_source(text, fs::path(files[k]).filename().string());
          !bad.empty())
        return failed(bad);
    const std::string object = work_dir + "/obj/" + source + ".o", deps = work_dir + "/obj/" + source + ".d";
    std::vector<std::string> cmd = compile_command(build_dir, lab.id, lab.submission_dir + "/" + source);
    // The name the staged copy's #line gives the hand-in. nvcc (-lineinfo) writes it into the
    // PTX's .file directive, which ptxas cannot read back with a quote or a backslash in it: for
    // nvcc they become '_' (a hand-in in such a folder is no less a hand-in).
    std::string line_name = files[k];
    if (!cmd.empty() && fs::path(cmd[0]).filename() == "nvcc")
      std::replace_if(line_name.begin(), line_name.end(), [](char c) { return c == '"' || c == '\\'; }, '_');
    std::ofstream(staged, std::ios::binary)
        << (defence_enabled("staging") ? vetting::staged_text(text, line_name)
                                       : "#line 1 \"" + files[k] + "\"\n" + text);  // unescaped, BOM kept
    for (std::size_t i = 0; i + 1 < cmd.size(); ++i)
      if (cmd[i] == "-o") cmd[i + 1] = object;
    for (auto& arg : cmd)
      if (arg == lab.submission_dir + "/" + source) arg = staged;
    cmd.insert(cmd.begin() + 1, {"-MD", "-MF", deps});
    spec.workdir = build_dir;  // the command's relative paths are the build tree's
    // On the emulator a hand-in that launches with `<<<>>>` is compiled from its translation, made
    // in the sandbox by the build's gpulab-cuda2emu, as CMake does for the lab's own files
    // (cmake/GpulabBackend.cmake). The translation keeps every line's file and number.
    const bool emu = fs::path(cmd[0]).filename() != "nvcc" && std::find(cmd.begin(), cmd.end(), "hip") == cmd.end();
    static const std::regex dynamic_shared(R"(extern\s+__shared__)");
    if (emu && (text.find("<<<") != std::string::npos || std::regex_search(text, dynamic_shared))) {
      const std::string tool = build_dir + "/common/emu/cuda2emu/gpulab-cuda2emu";
      if (!fs::exists(tool))
        return failed(fs::path(files[k]).filename().string() +
                      " launches kernels with <<<>>>, which the emu back-end translates with gpulab-cuda2emu, and "
                      "this build has none (" + tool + ")\n  hint: build it: cmake --build " + build_dir +
                      " --target gpulab-cuda2emu");
      const std::string translated = work_dir + "/src/" + fs::path(source).stem().string() + ".emu" +
                                     fs::path(source).extension().string();
      const ProcessResult tr = confined({tool, staged, "-o", translated}, spec, verbose);
      isolation = tr.isolation;
      if (tr.timed_out || !tr.ok()) {
        // The tool names the staged copy, whose first line is the #line directive it starts with.
        std::istringstream lines(shown_diagnostics(tr.output, readable_by(lab, files[k], work_dir), build_dir));
        std::string why;
        for (std::string line; std::getline(lines, line) && why.size() < 4000;) {
          int n = 0;
          if (line.rfind(staged + ":", 0) == 0 && std::sscanf(line.c_str() + staged.size() + 1, "%d", &n) == 1 && n > 1)
            line = fs::path(files[k]).filename().string() + ":" + std::to_string(n - 1) +
                   line.substr(line.find(':', staged.size() + 1));
          why += "  " + line + "\n";
        }
        return failed("the <<<>>> launches cannot be translated for the emulator (" + tr.describe() + "):\n" + why,
                      isolation);
      }
      for (auto& arg : cmd)
        if (arg == staged) arg = translated;
    }
    const ProcessResult cc = confined(cmd, spec, verbose);
    isolation = cc.isolation;
    if (cc.timed_out)
      return failed("compiling " + source + " did not finish within " + std::to_string(int(timeout_seconds)) +
                        " s (the build's time limit)\n  hint: a template or constexpr computation that never ends?",
                    isolation);
    Readable readable = readable_by(lab, files[k], work_dir);
    readable.files.push_back(line_name);  // the name the compiler knows it by
    if (!cc.ok()) {
      // The include rules first (the dependency list is written on errors too): a file the
      // hand-in may not read never reaches its messages.
      if (const std::string bad = fs::exists(deps) ? includes_problem(lab, readable, deps, cmd) : ""; !bad.empty())
        return failed(bad, isolation);
      return failed("the code does not compile (" + cc.describe() + "):\n" +
                        compiler_errors(shown_diagnostics(cc.output, readable, build_dir)),
                    isolation);
    }
    // The same rule on the preprocessed text of the hand-in's own lines: a word built by token
    // pasting or hidden behind a line splice is spelt out there (clang and hipcc; nvcc's objects
    // are checked for system-call instructions instead).
    if (defence_enabled("source-text") && fs::path(cmd[0]).filename() != "nvcc") {
      std::vector<std::string> pre;
      for (std::size_t i = 0; i < cmd.size(); ++i) {
        if (cmd[i] == "-MD") { i += 2; continue; }       // -MD -MF deps
        if (cmd[i] == "-o") { pre.push_back("-o"); pre.push_back(work_dir + "/obj/" + source + ".i"); ++i; continue; }
        pre.push_back(cmd[i] == "-c" ? "-E" : cmd[i]);
      }
      const ProcessResult pp = confined(pre, spec, false);
      if (pp.ok()) {
        std::istringstream in(read_text(work_dir + "/obj/" + source + ".i"));
        std::string line, current, own;
        const std::regex marker(R"re(^# \d+ "(.*)")re");
        std::smatch m;
        while (std::getline(in, line)) {
          if (std::regex_search(line, m, marker)) { current = m[1].str(); own += "\n"; continue; }
          own += (current == files[k] || current.find(fs::path(files[k]).filename().string()) != std::string::npos)
                     ? line + "\n" : "\n";
        }
        if (const std::string bad = source_rules::check_preprocessed(own, fs::path(files[k]).filename().string());
            !bad.empty())
          return failed(bad, isolation);
      }
    }
    if (const std::string bad = includes_problem(lab, readable, deps, cmd); !bad.empty()) return failed(bad, isolation);
    objects.push_back(object);
  }

  // Link: the lab's checks and the harness, exactly as CMake links the submission slot.
  const std::string target = "lab-" + lab.id + "-submission";
  std::vector<std::string> link = link_command(build_dir, target);
  const std::string runner = work_dir + "/runner";
  std::vector<std::string> ours;
  std::size_t replaced = 0;
  for (std::size_t i = 0; i < link.size(); ++i) {
    std::string& arg = link[i];
    if (i > 0 && link[i - 1] == "-o") {
      arg = runner;
      continue;
    }
    for (std::size_t k = 0; k < lab.sources.size(); ++k)
      if (ends_with(arg, "/submissions/" + lab.id + "/" + lab.sources[k] + ".o")) {
        arg = objects[k];
        ++replaced;
      }
    if (arg[0] != '-' && (ends_with(arg, ".o") || ends_with(arg, ".a") || ends_with(arg, ".so")) &&
        std::find(objects.begin(), objects.end(), arg) == objects.end()) {
      const fs::path p = fs::path(arg).is_absolute() ? fs::path(arg) : fs::path(build_dir) / arg;
      if (p.string().rfind(build_dir, 0) == 0) ours.push_back(p.string());
    }
  }
  if (replaced != objects.size()) return failed("grader error: the link command of " + target + " has no slot", isolation);

  if (defence_enabled("symbols")) {
    std::vector<std::string> contract;
    for (const auto& f : lab.functions) contract.push_back(f);
    // What the submission may not define: the strong symbols of the build's own objects and
    // libraries, and every C-linkage name of any library the runner is linked with.
    std::set<std::string> taken = vetting::defined_symbols(ours);
    const std::set<std::string> c_names = vetting::library_c_names(linked_libraries(link, build_dir));
    taken.insert(c_names.begin(), c_names.end());
    const std::string bad = vetting::check_object_symbols(objects, contract, taken, fs::path(files[0]).filename().string());
    if (!bad.empty()) return failed(bad, isolation);
  }

  const ProcessResult ld = confined(link, spec, verbose);
  if (!ld.ok())
    return failed("the code does not link (" + ld.describe() + "):\n" + compiler_errors(ld.output) +
                      "  hint: the lab's header declares the function(s) you must define, with exactly that signature",
                  isolation);
  HandinBuild b;
  b.ok = true;
  b.executable = runner;
  b.isolation = isolation;
  return b;
}

}  // namespace gpulab::grade
