#include "object_code.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "process.hpp"
#include "symbol_rules.hpp"
#include "tool_cache.hpp"

namespace gpulab::grade::vetting::objects {
namespace {

std::string basename_of(const std::string& path) { return std::filesystem::path(path).filename().string(); }

/// Runs a tool with its standard output going to a temporary file: run_process keeps only the
/// last 64 KiB of output, and nm of a library prints more.
bool tool_output(const std::vector<std::string>& argv, std::string& out, std::string& error) {
  char tmpl[] = "/tmp/gpulab-vetting-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) {
    error = "cannot create a temporary file";
    return false;
  }
  close(fd);
  std::vector<std::string> cmd{"/bin/sh", "-c", "exec \"$@\" > \"$GPULAB_VETTING_OUT\"", "sh"};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  const ProcessResult p = run_process(cmd, {{"GPULAB_VETTING_OUT", tmpl}}, 120);
  std::ifstream in(tmpl, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  out = os.str();
  std::remove(tmpl);
  if (p.ok()) return true;
  error = argv[0] + " " + p.describe() + ": " + tail_lines(p.output, 3);
  return false;
}

std::string relocation_symbol(const std::string& value) {
  static const std::regex addend("[+-]0x[0-9a-fA-F]+$");
  return std::regex_replace(value, addend, "");
}

/// nvcc gives every __device__ function a host body that cannot run: `{ volatile int v = 1;
/// exit(v); }`. Recognised by its instructions: 1 stored, loaded into exit's argument, the call.
bool nvcc_device_function_stub(const Code& code, const Code::Reloc& r) {
  if (r.symbol != "exit") return false;
  const auto& b = code.body.at(r.function);
  if (b.size() > 16 || r.insn < 2 || b[r.insn].rfind("call", 0) != 0) return false;
  std::size_t load = r.insn - 1;
  std::string reg = ",%edi";
  if (b[load] == "mov %eax,%edi") --load, reg = ",%eax";  // -O0 goes through %eax
  const std::string& mov = b[load];
  if (mov.rfind("mov ", 0) != 0 || mov.size() <= 4 + reg.size() || mov.compare(mov.size() - reg.size(), reg.size(), reg) != 0)
    return false;
  const std::string slot = mov.substr(4, mov.size() - 4 - reg.size());
  for (std::size_t k = 0; k < load; ++k)
    if (b[k] == "movl $0x1," + slot) return true;
  return false;
}

/// Whether a reference is the GPU compilers' own: their registration code (see
/// rules::compiler_contexts) or nvcc's host bodies of device functions.
bool generated_reference(const Code& code, const Code::Reloc& r) {
  if (nvcc_device_function_stub(code, r)) return true;
  for (const auto& c : rules::compiler_contexts())
    if (r.symbol == c.symbol && r.function == c.function && code.by_function.at(r.function).count(c.companion)) return true;
  return false;
}

}  // namespace

bool read_symbols(const std::string& file, bool dynamic, std::vector<Symbol>& out, std::string& error,
                  bool library) {
  std::vector<std::string> argv{"nm", "-P"};
  if (dynamic) argv.push_back("-D");
  argv.push_back(file);
  auto run = [&]() -> std::optional<std::string> {
    std::string text;
    if (!tool_output(argv, text, error)) return std::nullopt;
    return text;
  };
  const std::optional<std::string> listed = library ? tool_cache::output(argv, {file}, run) : run();
  if (!listed) return false;
  const std::string& text = *listed;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name, type;
    if (!(fields >> name >> type) || type.size() != 1 || line.back() == ':') continue;  // archive member headers
    out.push_back({name.substr(0, name.find('@')), type[0]});  // name@VERSION in shared libraries
  }
  return true;
}

bool read_code(const std::string& object, const std::string& display, Code& code, std::string& error) {
  std::string text;
  if (!tool_output({"objdump", "-drlw", "--no-show-raw-insn", object}, text, error)) return false;
  const bool x86 = text.find("file format elf64-x86-64") != std::string::npos;
  const bool arm = text.find("file format elf64-littleaarch64") != std::string::npos;
  static const std::regex label(R"(^[0-9a-f]+ <(.+)>:$)");
  static const std::regex source_line(R"(^(\S.*):([0-9]+)( \(discriminator [0-9]+\))?$)");
  static const std::regex reloc(R"(\bR_[A-Z0-9_]+\s+(\S+))");
  std::istringstream in(text);
  std::string function;
  int line = 0;
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, label)) {
      function = m[1].str();
      line = 0;
    } else if (std::regex_match(l, m, source_line)) {
      line = basename_of(m[1].str()) == basename_of(display) ? std::stoi(m[2].str()) : 0;
    } else if (!l.empty() && std::isspace(static_cast<unsigned char>(l[0])) && l.find(":\t") != std::string::npos) {
      std::string text = l.substr(l.find(":\t") + 2);
      text = text.substr(0, std::min(text.find('\t'), text.find('#')));  // the relocation, the comment
      std::istringstream insn(text);
      std::vector<std::string> words;
      for (std::string w; insn >> w;) words.push_back(w);
      auto& body = code.body[function];
      if (std::regex_search(l, m, reloc)) {
        const std::string sym = relocation_symbol(m[1].str());
        ++code.by_function[function][sym];
        code.relocs.push_back({function, sym, body.size(), line});
      }
      body.push_back(words.empty() ? "" : words[0] + (words.size() > 1 ? " " + words[1] : ""));
      for (std::size_t k = 0; k < words.size(); ++k)
        if ((x86 && (words[k] == "syscall" || words[k] == "sysenter" ||
                     (words[k] == "int" && k + 1 < words.size() && words[k + 1] == "$0x80"))) ||
            (arm && words[k] == "svc"))
          code.raw_syscalls.emplace_back(words[k] == "int" ? "int $0x80" : words[k], line);
    }
  }
  if (!tool_output({"objdump", "-r", object}, text, error)) return false;
  std::istringstream all(text);
  static const std::regex record(R"(^[0-9a-f]+\s+R_\S+\s+(\S+))");
  for (std::string l; std::getline(all, l);) {
    std::smatch m;
    if (std::regex_search(l, m, record)) ++code.total[relocation_symbol(m[1].str())];
  }
  return true;
}

/// The line of the student's file of the first reference to `symbol` that is not generated.
int reference_line(const Code& code, const std::string& symbol) {
  for (const auto& r : code.relocs)
    if (r.symbol == symbol && !generated_reference(code, r)) return r.line;
  return 0;
}

/// Whether every reference to `symbol` (in code and data) is one the compilers generated.
bool only_compiler_references(const std::string& symbol, const Code& code) {
  int generated = 0;
  for (const auto& r : code.relocs) generated += r.symbol == symbol && generated_reference(code, r);
  const auto t = code.total.find(symbol);
  return generated > 0 && t != code.total.end() && t->second <= generated;
}

}  // namespace gpulab::grade::vetting::objects
