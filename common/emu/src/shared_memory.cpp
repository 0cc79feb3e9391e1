// Where `__shared__` variables live, and poisoning them at the start of every block.
//
// `__shared__` is `static thread_local`: each worker OS thread has its own copy, and a block
// runs on one worker, so the copy is the block's shared memory. Those variables are the only
// thread-locals of the executable (the runtime, GoogleTest and Google Benchmark keep theirs in
// their own modules), so the executable's static TLS block is the shared memory of every
// kernel. Filling it with 0xFF bytes before each block makes a read of shared memory that no
// thread of this block wrote return NaN / -1, identically whichever worker runs the block.
#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "internal.hpp"

namespace gpulab::emu::detail {
namespace {

struct TlsBlock {
  std::size_t size = 0;
};

TlsBlock executable_tls() {
  TlsBlock t;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        // The first object listed is the executable itself.
        for (int k = 0; k < info->dlpi_phnum; ++k) {
          const auto& ph = info->dlpi_phdr[k];
          if (ph.p_type == PT_TLS) {
            const std::size_t align = ph.p_align ? ph.p_align : 1;
            static_cast<TlsBlock*>(data)->size = (ph.p_memsz + align - 1) / align * align;
          }
        }
        return 1;  // stop after the executable
      },
      &t);
  return t;
}

bool poisoning_enabled() {
  const char* v = std::getenv("GPULAB_EMU_POISON_SHARED");
  return !(v && std::strcmp(v, "0") == 0);
}

/// "buf" for `rows(float const*, float*, int)::buf`: the variable's own name, short enough for a
/// message (the function is named by the message's file:line).
std::string short_name(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && d ? d : mangled;
  std::free(d);
  const auto k = name.rfind(")::");
  if (k != std::string::npos) name.erase(0, k + 3);
  return name;
}

/// The executable's defined symbols of ELF type `type` (STT_TLS, STT_OBJECT) that have a size, from
/// its symbol table (empty when it has none, e.g. stripped): link-time value, size, mangled name.
struct ElfSymbol {
  std::size_t value = 0, size = 0;
  std::string name;
};
std::vector<ElfSymbol> executable_symbols(unsigned type) {
  std::vector<ElfSymbol> out;
  const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st {};
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > static_cast<off_t>(sizeof(Elf64_Ehdr)))
    map = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return out;
  const auto* base = static_cast<const unsigned char*>(map);
  const std::size_t file_size = static_cast<std::size_t>(st.st_size);
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  const bool elf64 = std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
                     eh->e_shentsize == sizeof(Elf64_Shdr) &&
                     eh->e_shoff + std::size_t{eh->e_shnum} * sizeof(Elf64_Shdr) <= file_size;
  if (elf64) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; ++i) {
      if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr& strtab = sh[sh[i].sh_link];
      if (sh[i].sh_offset + sh[i].sh_size > file_size || strtab.sh_offset + strtab.sh_size > file_size) continue;
      const auto* sym = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
      const std::size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
      for (std::size_t k = 0; k < count; ++k) {
        if (ELF64_ST_TYPE(sym[k].st_info) != type || sym[k].st_size == 0 || sym[k].st_shndx == SHN_UNDEF ||
            sym[k].st_name >= strtab.sh_size)
          continue;
        out.push_back({static_cast<std::size_t>(sym[k].st_value), static_cast<std::size_t>(sym[k].st_size),
                       reinterpret_cast<const char*>(base + strtab.sh_offset + sym[k].st_name)});
      }
    }
  }
  munmap(map, file_size);
  std::sort(out.begin(), out.end(), [](const ElfSymbol& a, const ElfSymbol& b) { return a.value < b.value; });
  return out;
}

/// The executable's thread-local symbols (its `__shared__` variables), from its ELF symbol table.
std::vector<SharedVariable> read_shared_variables(std::size_t tls_size) {
  std::vector<SharedVariable> out;
  for (const ElfSymbol& sym : executable_symbols(STT_TLS)) {
    if (sym.value + sym.size > tls_size) continue;
    if (sym.name.find("gpulab_shared_redzone_") != std::string::npos) continue;  // between variables: never valid
    out.push_back({sym.value, sym.size, short_name(sym.name.c_str())});
  }
  return out;
}

}  // namespace

namespace {
/// The executable's symbols of one type, at their run-time addresses (a PIE is loaded anywhere).
std::vector<ElfSymbol> loaded_symbols(unsigned type) {
  std::uintptr_t load = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* d) {
        *static_cast<std::uintptr_t*>(d) = info->dlpi_addr;
        return 1;
      },
      &load);
  std::vector<ElfSymbol> v = executable_symbols(type);
  for (ElfSymbol& s : v) s.value += load;
  return v;
}

const std::vector<ElfSymbol>& data_symbols() {
  static const std::vector<ElfSymbol> symbols = loaded_symbols(STT_OBJECT);
  return symbols;
}

/// The data symbol holding `a`, or null.
const ElfSymbol* data_symbol_at(std::uintptr_t a) {
  const std::vector<ElfSymbol>& symbols = data_symbols();
  auto it = std::upper_bound(symbols.begin(), symbols.end(), a,
                             [](std::uintptr_t x, const ElfSymbol& s) { return x < s.value; });
  if (it != symbols.begin() && a < std::prev(it)->value + std::prev(it)->size) return &*std::prev(it);
  return nullptr;
}
}  // namespace

std::string function_name(const void* a) {
  static const std::vector<ElfSymbol> functions = loaded_symbols(STT_FUNC);
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  auto it = std::upper_bound(functions.begin(), functions.end(), x,
                             [](std::uintptr_t v, const ElfSymbol& s) { return v < s.value; });
  if (!a || it == functions.begin() || x >= std::prev(it)->value + std::prev(it)->size) return {};
  std::string name = short_name(std::prev(it)->name.c_str());
  // Without its parameter list (the name is what a reader looks for).
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    else if (name[i] == '>') --depth;
    else if (name[i] == '(' && depth == 0 && name.compare(i, 21, "(anonymous namespace)") != 0) return name.substr(0, i);
  }
  return name;
}

std::string static_data_label(std::uintptr_t a) {
  if (const ElfSymbol* s = data_symbol_at(a))
    return "the static variable '" + short_name(s->name.c_str()) + "' (offset " + std::to_string(a - s->value) + ")";
  return "the program's static data";
}

bool static_variable_bounds(std::uintptr_t a, std::uintptr_t& begin, std::uintptr_t& end) {
  const ElfSymbol* s = data_symbol_at(a);
  if (!s) return false;
  begin = s->value;
  end = s->value + s->size;
  return true;
}

const std::vector<SharedVariable>& shared_variables() {
  static const std::vector<SharedVariable> vars = read_shared_variables(executable_tls().size);
  return vars;
}

/// [begin, end) of this thread's copy of the executable's thread-locals (x86-64 TLS variant II:
/// the executable's block ends at the thread pointer).
void shared_memory_range(std::uintptr_t& begin, std::uintptr_t& end) {
  static const TlsBlock tls = executable_tls();
  std::uintptr_t tp;
#if defined(__x86_64__)
  asm("mov %%fs:0, %0" : "=r"(tp));
  begin = tp - tls.size;
  end = tp;
#else
  (void)tp;
  begin = end = 0;  // other architectures: no poisoning
#endif
}

void poison_shared_memory(Worker& w) {
  static const bool enabled = poisoning_enabled();
  if (!enabled) return;
  std::uintptr_t begin, end;
  shared_memory_range(begin, end);
  if (end > begin) std::memset(reinterpret_cast<void*>(begin), 0xFF, end - begin);
  if (w.launch->dynamic_shared) std::memset(w.dynamic_shared, 0xFF, w.launch->dynamic_shared);
}

}  // namespace gpulab::emu::detail
