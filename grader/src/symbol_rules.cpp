#include "symbol_rules.hpp"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <utility>

namespace gpulab::grade::vetting::rules {
namespace {

using R = Rule;

// C-linkage names (and nm's unmangled C++ globals), space separated; a trailing '*' makes a
// prefix. The refusals are listed (rather than left to the default) so that the message names the
// rule; they are looked up before the allowances, so e.g. hipblas* wins over hip*.
const std::pair<Rule, const char*> kRefusedNames[] = {
    {R::dynamic_loading,
     "dlopen dlmopen dlsym dlvsym dlclose dlerror dladdr dladdr1 dlinfo dl_iterate_phdr _dl_* "
     "__libc_dlopen_mode __libc_dlsym __libc_dlvsym getauxval cudaGetDriverEntryPoint* "
     "cudaGetProcAddress* cudaLibraryLoad* cudaLibraryGetKernel hipGetProcAddress* hipModuleLoad* "
     "hipModuleGetFunction hipModuleLaunchKernel hipLibraryLoad* cuModuleLoad* cuGetProcAddress* "
     "cuLibraryLoad*"},
    {R::processes,
     "fork vfork _Fork clone clone3 __clone execve execv execvp execvpe execl execlp execle fexecve "
     "execveat system popen pclose posix_spawn* wait waitpid wait3 wait4 waitid kill killpg tgkill "
     "pthread_create pthread_kill pthread_detach pthread_join pthread_cancel pthread_exit "
     "pthread_setaffinity_np sched_setaffinity setpriority nice daemon setsid setpgid"},
    {R::files,
     "open open64 openat openat64 __open_2 __open64_2 __openat_2 __openat64_2 creat creat64 fopen "
     "fopen64 freopen freopen64 fdopen fclose fread fread_unlocked __fread_chk fgets __fgets_chk fgetc "
     "getc getchar gets getline getdelim scanf fscanf __isoc99_scanf __isoc99_fscanf __isoc23_scanf "
     "__isoc23_fscanf read __read_chk pread pread64 __pread_chk readv write pwrite pwrite64 writev "
     "close lseek lseek64 dup dup2 dup3 pipe pipe2 fcntl fcntl64 sendfile splice tee unlink unlinkat "
     "rename renameat renameat2 remove mkdir mkdirat rmdir chmod fchmod fchmodat chown fchown lchown "
     "link linkat symlink symlinkat readlink readlinkat truncate ftruncate mkfifo mknod stat stat64 "
     "fstat lstat statx __xstat __fxstat __lxstat access faccessat opendir fdopendir readdir readdir64 "
     "scandir realpath getcwd tmpfile tmpnam mkstemp mkostemp mkdtemp memfd_create shm_open "
     "inotify_init inotify_add_watch socket socketpair connect bind listen accept accept4 send "
     "sendto sendmsg recv recvfrom recvmsg getaddrinfo gethostbyname stdin"},
    {R::environment,
     "getenv secure_getenv __secure_getenv setenv putenv unsetenv clearenv environ __environ _environ "
     "confstr"},
    {R::exit_and_signals,
     "exit _exit _Exit quick_exit at_quick_exit atexit on_exit __cxa_at_quick_exit signal "
     "__sysv_signal bsd_signal sigaction sigprocmask pthread_sigmask raise sigaltstack alarm "
     "setitimer timer_create pause sigsuspend sigwait pthread_atfork"},
    {R::system_calls,
     "syscall ptrace mmap mmap64 munmap mremap mprotect pkey_mprotect madvise mlock mlockall brk sbrk "
     "setrlimit setrlimit64 getrlimit prlimit prlimit64 prctl arch_prctl chdir fchdir chroot ioctl "
     "seccomp personality unshare setns mount umount umount2 reboot setuid seteuid setgid "
     "process_vm_readv process_vm_writev sched_setscheduler __libc_*"},
    // Memory both the host and kernels reach (pinned, mapped, managed): kernels could leave the
    // inputs there for host code to compute with, out of reach of every check on device memory.
    {R::shared_host_memory,
     "cudaMallocHost cudaHostAlloc cudaHostRegister cudaHostUnregister cudaHostGetDevicePointer cudaFreeHost "
     "cudaMallocManaged cudaMemPrefetchAsync cudaMemAdvise* hipHostMalloc hipHostAlloc hipMallocHost hipHostRegister "
     "hipHostUnregister hipHostGetDevicePointer hipHostFree hipFreeHost hipMallocManaged hipMemPrefetchAsync "
     "hipMemAdvise* cuMemHostAlloc* cuMemAllocHost* cuMemHostRegister* cuMemAllocManaged*"},
    // The L2's persisting lines: a set-aside and an access-policy window keep a kernel's inputs in
    // the L2 across the grader's flush before every timed run (the names with their per-thread
    // stream variants). The set-aside is also reset before every run (grade/timing.hpp).
    {R::cache_controls,
     "cudaDeviceSetLimit* cudaCtxResetPersistingL2Cache* cudaStreamSetAttribute* cudaStreamCopyAttributes* "
     "cudaGraphKernelNodeSetAttribute* cudaGraphKernelNodeCopyAttributes* cuCtxSetLimit* cuCtxResetPersistingL2Cache* "
     "cuStreamSetAttribute* cuStreamCopyAttributes* cuGraphKernelNodeSetAttribute* hipDeviceSetLimit* "
     "hipStreamSetAttribute* hipCtxResetPersistingL2Cache*"},
    {R::vendor_libraries,
     "cublas* curand* cudnn* cufft* cusparse* cusolver* cutensor* nvrtc* nvJitLink* nvjitlink* nccl* "
     "rocblas* rocsolver* rocfft* rocrand* rocsparse* hipblas* hiprand* hipfft* hipsparse* hipsolver* "
     "hiprtc* miopen* rccl*"},
};

const char* const kAllowedNames =
    // GPU runtimes, and the symbols their compilers' generated code references.
    "cuda* __cuda* hip* __hip* __gnu_h2f_ieee __gnu_f2h_ieee "
    // The emulator's kernel vocabulary (extern int warpSize), load/store tracing hooks and the
    // counter the instruction-counting pass adds (common/emu/passes/count_pass.cpp). A hand-in's
    // source may not name the hooks or the counter itself (handin.cpp's source-text rule).
    "warpSize threadIdx blockIdx blockDim gridDim __sanitizer_cov_* gpulab_emu_icount "
    // The calls the device pass adds (common/emu/passes/device_pass.cpp): traced copies and odd-sized
    // accesses, host calls refused in kernels.
    "gpulab_emu_device_* "
    // Allocation.
    "malloc calloc realloc reallocarray free aligned_alloc posix_memalign memalign "
    "malloc_usable_size "
    // C++ runtime, unwinding, stack protector, TLS.
    "__cxa_* __gxx_personality_v0 __gcc_personality_v0 _Unwind_Resume __dynamic_cast __dso_handle "
    "__stack_chk_fail __stack_chk_guard __tls_get_addr __emutls_get_address _GLOBAL_OFFSET_TABLE_ "
    "__pthread_key_create __libc_single_threaded __gmon_start__ _ITM_* __assert_fail __assert_perror_fail "
    "abort __errno_location __once_proxy __atomic_* __sync_* "
    "pthread_mutex_* pthread_once pthread_key_create pthread_key_delete pthread_getspecific "
    "pthread_setspecific pthread_self pthread_equal pthread_cond_* pthread_rwlock_* pthread_spin_* "
    "__cpu_model __cpu_features2 __cpu_indicators_init "
    // Pure memory and string functions, conversions, sorting, time, sleeping.
    "memcpy memmove memset memcmp memchr memrchr rawmemchr __rawmemchr bzero explicit_bzero bcmp "
    "strlen strnlen strcmp strncmp strcasecmp strncasecmp strcpy strncpy stpcpy strcat strncat "
    "strchr strrchr strstr strspn strcspn strpbrk strtok strtok_r strdup __strdup strndup strerror "
    "__memcpy_chk __memmove_chk __memset_chk __strcpy_chk __strncpy_chk __stpcpy_chk __strcat_chk "
    "__strncat_chk __explicit_bzero_chk strtol strtoul strtoll strtoull strtof strtod strtold "
    "__isoc23_strtol __isoc23_strtoul __isoc23_strtoll __isoc23_strtoull atoi atol atoll atof "
    "sscanf __isoc99_sscanf __isoc23_sscanf toupper tolower __ctype_b_loc __ctype_tolower_loc "
    "__ctype_toupper_loc abs labs llabs div ldiv lldiv qsort bsearch rand srand rand_r random srandom "
    "clock clock_gettime time gettimeofday nanosleep usleep sched_yield "
    // Printing to stdout and stderr (a FILE* can only come from them: fopen & co. are refused).
    "printf vprintf fprintf vfprintf puts fputs putchar fputc putc _IO_putc fwrite fflush perror setvbuf "
    "setbuf putchar_unlocked putc_unlocked fputc_unlocked fputs_unlocked fwrite_unlocked "
    "snprintf sprintf vsnprintf vsprintf __printf_chk __vprintf_chk __fprintf_chk __vfprintf_chk "
    "__sprintf_chk __snprintf_chk __vsprintf_chk __vsnprintf_chk stdout stderr";

// libm: each name also with the f and l suffixes and as __name_finite / __namef_finite.
const char* const kMathNames =
    "sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 exp10 expm1 log log2 "
    "log10 log1p logb ilogb pow sqrt cbrt hypot erf erfc erfinv tgamma lgamma lgamma_r gamma ceil "
    "floor trunc round lround llround rint lrint llrint nearbyint fmod remainder remquo fma fmax fmin "
    "fdim fabs copysign nan nextafter nexttoward frexp ldexp modf scalbn scalbln sincos j0 j1 jn y0 "
    "y1 yn __isnan __isinf __finite __fpclassify __signbit __sincos";

// What gpulab::emu:: offers kernel code and the CUDA shim (kernel.hpp, launch.hpp,
// cuda_runtime_shim.hpp call these from inline code); the rest of gpulab::emu (findings, metrics,
// settings, detail::) is the grader's.
const std::set<std::string> kEmuVocabulary = {
    "sync_block",   "warp_collective", "shuffle_source", "active_mask",  "live_lanes",
    "dynamic_shared_base", "note_atomic", "launch_blocks", "builtins", "take_pending_fault",
    "fault_pending", "device_alloc", "device_free", "is_device_range", "warp_size", "workers",
    "stack_bytes", "KernelFault", "to_bits", "from_bits", "atomic_update", "atomic_apply", "thread_fence",
    // the CUDA runtime shim's copies and fills (cudaMemcpy, cudaMemset on the emulator)
    "host_copy", "host_fill",
    // the CUDA shim's error codes and launches that return them (cuda_runtime_launch.hpp), and
    // the 16-bit float types of the emulator's <cuda_fp16.h> / <cuda_bf16.h>
    "cuda_sticky_error", "cuda_last_error", "cuda_record_error", "cuda_reset_errors",
    "launch_with_status", "launch_from_pointers", "fp16", "same_type",
    // the shim's __device__ / __constant__ variables (cudaMemcpyToSymbol, cudaGetSymbolAddress)
    "note_device_symbol", "is_device_symbol_range",
    // asynchronous copies to shared memory (<cuda_pipeline.h>: the bytes travel by value)
    "async_copy_issue", "async_copy_commit", "async_copy_wait",
    // __trap() and what the emulator cannot run (a grid group's sync): the block stops with a fault
    "kernel_stop",
    // kernel.hpp's helpers of the warp functions, conversions and funnel shifts (inline templates)
    "warp_reduce", "convert_rounded", "funnel", "clamp_shift"};

// Namespaces whose template and inline code a submission instantiates (weak definitions), but
// to which it may not add strong definitions.
const std::set<std::string> kLibraryNamespaces = {"std",  "__gnu_cxx", "__cxxabiv1", "gpulab",
                                                   "cuda", "cub",       "thrust",     "cooperative_groups",
                                                   "hip_impl", "__hip_internal", "rocprim", "hipcub"};

struct Table {
  std::map<std::string, Rule> exact;
  std::vector<std::pair<std::string, Rule>> prefixes;  // refusals first
  void add(Rule r, const char* names) {
    std::istringstream in(names);
    for (std::string n; in >> n;) {
      if (n.back() == '*') prefixes.emplace_back(n.substr(0, n.size() - 1), r);
      else exact.emplace(n, r);  // the first entry of a name wins: refusals are added first
    }
  }
  bool find(const std::string& name, Rule& out) const {
    if (auto it = exact.find(name); it != exact.end()) return out = it->second, true;
    for (const auto& [p, r] : prefixes)
      if (name.compare(0, p.size(), p) == 0) return out = r, true;
    return false;
  }
};

const Table& c_names() {
  static const Table table = [] {
    Table t;
    for (const auto& [rule, names] : kRefusedNames) t.add(rule, names);
    std::istringstream in(kMathNames);
    std::string all;
    for (std::string n; in >> n;)
      for (const char* suffix : {"", "f", "l"}) all += n + suffix + " __" + n + suffix + "_finite ";
    t.add(R::allowed, all.c_str());
    t.add(R::allowed, kAllowedNames);
    return t;
  }();
  return table;
}

/// A tiny reader of Itanium-mangled names: only the leading components of the qualified name.
struct Reader {
  const std::string& s;
  std::size_t i = 2;  // after "_Z"
  std::vector<std::string>& out;

  bool at(char c) const { return i < s.size() && s[i] == c; }
  bool eat(const char* p) {
    const std::size_t n = std::strlen(p);
    if (s.compare(i, n, p) != 0) return false;
    i += n;
    return true;
  }
  bool digit() const { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }
  bool source_name() {
    std::size_t n = 0;
    if (!digit()) return false;
    while (digit()) n = n * 10 + static_cast<std::size_t>(s[i++] - '0');
    if (n == 0 || i + n > s.size()) return false;
    out.push_back(s.substr(i, n));
    i += n;
    return true;
  }
  // St, and the abbreviations of std::allocator, std::basic_string, std::ostream & co.
  bool std_prefix() {
    static const std::pair<const char*, const char*> abbrev[] = {
        {"St", nullptr}, {"Sa", "allocator"}, {"Sb", "basic_string"}, {"Ss", "string"},
        {"Si", "istream"}, {"So", "ostream"}, {"Sd", "iostream"}};
    for (const auto& [code, name] : abbrev)
      if (eat(code)) {
        out.push_back("std");
        if (name) out.push_back(name);
        return true;
      }
    return false;
  }
  bool unqualified() {
    eat("L");  // internal linkage
    if (digit()) return source_name();
    if (i + 1 < s.size() && std::islower(static_cast<unsigned char>(s[i])) &&
        std::islower(static_cast<unsigned char>(s[i + 1]))) {
      out.push_back("operator " + s.substr(i, 2));
      i += 2;
      return true;
    }
    return false;
  }
  bool name() {
    if (eat("N")) {
      while (i < s.size() && std::strchr("rVKRO", s[i])) ++i;  // qualifiers of a member function
      std_prefix();
      // Template arguments, constructors, unnamed types, substitutions: the scope is known by now.
      while (i < s.size() && !std::strchr("EICDUTS", s[i])) {
        if (eat("B")) {  // an ABI tag ([abi:cxx11]) is not a scope
          std::vector<std::string> tag;
          Reader r{s, i, tag};
          if (!r.source_name()) return false;
          i = r.i;
          continue;
        }
        if (!unqualified()) break;  // something rarer (a closure prefix): what was read suffices
      }
      return !out.empty();
    }
    if (eat("Z")) return encoding();  // a local entity belongs to its function
    if (std_prefix()) {
      if (!unqualified()) out.push_back("?");  // still two components: std and something in it
      return true;
    }
    return unqualified();
  }
  bool call_offset() {  // h <number> _  |  v <number> _ <number> _
    const bool virt = eat("v");
    if (!virt && !eat("h")) return false;
    for (int k = 0; k < (virt ? 2 : 1); ++k) {
      eat("n");
      if (!digit()) return false;
      while (digit()) ++i;
      if (!eat("_")) return false;
    }
    return true;
  }
  bool type() {
    while (i < s.size() && std::strchr("PRKVO", s[i])) ++i;
    if (digit() || at('N') || at('Z') || at('S')) return name();
    out.push_back("<builtin>");  // typeinfo of int & co.: the C++ runtime's
    return true;
  }
  bool encoding() {
    if (eat("T")) {
      if (at('h') || at('v')) return call_offset() && encoding();
      if (eat("c")) return call_offset() && call_offset() && encoding();
      if (eat("H") || eat("W")) return name();
      if (i < s.size() && std::strchr("VTISC", s[i])) return ++i, type();
      return false;
    }
    if (eat("GV") || eat("GR")) return name();
    if (eat("GTt") || eat("GTn")) return encoding();
    return name();
  }
};

/// Names in the style of the GPU runtimes' C APIs, besides those c_names lists: the driver API
/// (cuInit, cuMemAlloc...), NVIDIA's and AMD's libraries (nv*, hsa*, amd*, roc*).
bool runtime_prefix(const std::string& name) {
  if (name.size() > 2 && name.compare(0, 2, "cu") == 0 && std::isupper(static_cast<unsigned char>(name[2]))) return true;
  for (const char* p : {"cuda", "hip", "nv", "hsa", "amd", "roc"})
    if (name.compare(0, std::strlen(p), p) == 0) return true;
  return false;
}

bool is_lab_namespace(const std::string& ns) {
  return ns.size() > 3 && ns.compare(0, 3, "lab") == 0 &&
         ns.find_first_not_of("0123456789", 3) == std::string::npos;
}

bool global_allocation_function(const std::vector<std::string>& scope) {
  return scope.size() == 1 && (scope[0] == "operator nw" || scope[0] == "operator na" ||
                               scope[0] == "operator dl" || scope[0] == "operator da");
}

// The arithmetic helpers of libgcc / compiler-rt that compilers call for 128-bit integers, complex
// numbers, half floats and conversions: __divti3, __mulsc3, __extendhfsf2, __floattisf ...
bool arithmetic_helper(const std::string& name) {
  static const std::regex re(
      "__(u?(div|mod|mul)|pow|extend|trunc|float|fix|neg|add|sub|cmp|eq|ne|lt|le|gt|ge|unord|clz|ctz|popcount|"
      "bswap|parity|ffs|ashl|ashr|lshr)[a-z]*[0-9]?");
  return name.size() <= 16 && std::regex_match(name, re);
}

// Vector-ABI (libmvec) names of math functions: _ZGVbN4v_sinf and the like.
bool vector_math(const std::string& name, Rule& r) {
  static const std::regex re("_ZGV[a-zA-Z][MN][0-9]+[a-zA-Z0-9]*_(.+)");
  std::smatch m;
  return std::regex_match(name, m, re) && c_names().find(m[1].str(), r) && r == R::allowed;
}

Rule classify_cxx_reference(const std::vector<std::string>& scope, const std::string& name) {
  if (scope.size() == 1) {  // the global namespace: the allocation functions and clock64()
    if (global_allocation_function(scope) || name == "_Z7clock64v" || scope[0] == "<builtin>") return R::allowed;
    return R::grader_internals;  // the checks' own helpers live there
  }
  const std::string& ns = scope[0];
  if (ns == "std") {
    for (const auto& c : scope) {
      if (c == "filesystem" || c == "__fs" || c == "basic_ifstream" || c == "basic_ofstream" ||
          c == "basic_fstream" || c == "basic_filebuf" || c == "__basic_file" || c == "cin" ||
          c == "wcin")
        return R::files;
      if (c == "thread" || c == "jthread") return R::processes;
      if (c == "set_terminate" || c == "set_unexpected") return R::exit_and_signals;
    }
    return R::allowed;
  }
  if (ns == "__gnu_cxx" || ns == "__cxxabiv1") return R::allowed;
  if (ns == "gpulab") {
    if (scope[1] == "grade") return R::grader_internals;
    if (scope[1] == "emu") return scope.size() > 2 && kEmuVocabulary.count(scope[2]) ? R::allowed : R::grader_internals;
    return R::allowed;
  }
  if (ns == "testing" || ns == "benchmark" || is_lab_namespace(ns)) return R::grader_internals;
  if (ns == "cutlass" || ns == "cute") return R::vendor_libraries;
  return R::not_in_api;
}

}  // namespace

const char* rule_name(Rule r) {
  switch (r) {
    case R::allowed: return "allowed";
    case R::dynamic_loading: return "no dynamic loading";
    case R::processes: return "no processes or threads";
    case R::files: return "no files or network";
    case R::environment: return "no environment variables";
    case R::exit_and_signals: return "no exit handlers or signals";
    case R::system_calls: return "no system calls";
    case R::vendor_libraries: return "no vendor libraries";
    case R::shared_host_memory: return "no memory shared by host and device";
    case R::cache_controls: return "no cache controls";
    case R::grader_internals: return "no grader internals";
    case R::overriding: return "no overriding the emulator or the grader";
    case R::not_in_api: return "only the allowed API";
  }
  return "?";
}

const char* rule_hint(Rule r) {
  switch (r) {
    case R::dynamic_loading: return "code loaded at run time is code the grader never saw; call what you need directly";
    case R::processes: return "your function runs inside the grader's process: do the work in it, on the GPU";
    case R::files: return "a submission gets its data as arguments; to debug, print with printf or std::cout";
    case R::environment: return "the lab process runs with an empty environment; write settings as constants";
    case R::exit_and_signals: return "return from your function (or throw gpulab::Error); the harness decides when the process ends";
    case R::system_calls: return "a kernel file needs no system calls: use the GPU runtime and gpulab's API";
    case R::vendor_libraries: return "the vendor library is what your code is measured against, not part of it; write the kernel yourself";
    case R::shared_host_memory: return "a lab function works on the device buffers it is given; for scratch space use cudaMalloc or gpulab::DeviceBuffer";
    case R::cache_controls: return "the grader empties the L2 before every timed run so that each run reads its inputs from memory, as in a real program; an L2 set-aside or a persisting access-policy window would keep them there (and device limits are the grader's to set)";
    case R::grader_internals: return "the checks, the harness and the emulator's bookkeeping are not an API: use gpulab/gpu.hpp and gpulab/host.hpp";
    case R::overriding: return "give your function another name, or put it in a namespace of your own (or an anonymous one)";
    case R::not_in_api: return "if your solution really needs it, ask your instructor to add it to the grader's allow-list";
    case R::allowed: break;
  }
  return "";
}

std::vector<std::string> scope_of(const std::string& mangled) {
  std::vector<std::string> out;
  if (mangled.compare(0, 2, "_Z") != 0) return out;
  Reader r{mangled, 2, out};
  if (!r.encoding()) out.clear();
  return out;
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                           std::free);
  return status == 0 && d ? std::string(d.get()) : mangled;
}

bool compiler_generated(const std::string& name) {
  for (const char* p : {"DW.ref.", "__hip_cuid_", "__hip_gpubin_handle", "__hip_fatbin", "__nv_", "__fatbinwrap_",
                        "_GLOBAL__sub_I_", "__sti__", ".L"})
    if (name.compare(0, std::strlen(p), p) == 0) return true;
  return name == "__clang_call_terminate";
}

Rule classify_reference(const std::string& name) {
  Rule r = R::not_in_api;
  if (name.compare(0, 2, "_Z") == 0) {
    if (vector_math(name, r)) return r;
    const auto scope = scope_of(name);
    return scope.empty() ? R::not_in_api : classify_cxx_reference(scope, name);
  }
  if (c_names().find(name, r)) return r;
  return arithmetic_helper(name) ? R::allowed : R::not_in_api;
}

Rule classify_definition(const std::string& name, char type, const std::vector<std::string>& contract_functions,
                         const std::set<std::string>& protected_symbols) {
  if (protected_symbols.count(name)) return R::overriding;
  if (compiler_generated(name)) return R::allowed;
  const bool weak = type == 'W' || type == 'V' || type == 'u';
  if (name.compare(0, 2, "_Z") == 0) {
    const auto scope = scope_of(name);
    if (scope.empty()) return R::overriding;  // not a name a compiler writes: an asm label
    if (scope.size() == 1)
      return global_allocation_function(scope) || scope[0] == "<builtin>" ? R::overriding : R::allowed;
    const std::string& ns = scope[0];
    if (ns == "gpulab" && scope[1] == "grade") return R::grader_internals;
    if (ns == "testing" || ns == "benchmark" || is_lab_namespace(ns)) return R::grader_internals;
    if (ns == "cutlass" || ns == "cute") return R::vendor_libraries;
    if (kLibraryNamespaces.count(ns)) return weak ? R::allowed : R::overriding;
    return R::allowed;  // the global namespace, anonymous namespaces, the student's own
  }
  for (const auto& f : contract_functions)
    if (name == f) return R::allowed;
  if (name == "main" || type == 'i') return R::overriding;  // 'i': an ifunc, resolved by the loader
  // A C-linkage name takes the place of the C library's, the runtime's or the emulator's of that
  // name (the linked libraries' names are in protected_symbols). Any other one cannot: an
  // `extern "C" __global__` kernel, a helper, a global (C++ globals of the global namespace are
  // not mangled: "int calls;"). Functions are held to more than data: no leading underscore (the
  // implementation's names in the global namespace) and none of the GPU runtimes' prefixes,
  // whose libraries load more of their kind at run time.
  Rule known = R::not_in_api;
  const bool function = type == 'T' || type == 'W';
  const bool reserved = name.compare(0, 2, "__") == 0 || (name.size() > 1 && name[0] == '_' &&
                                                           (function || std::isupper(static_cast<unsigned char>(name[1]))));
  if (reserved || c_names().find(name, known) || name.compare(0, 6, "gpulab") == 0) return R::overriding;
  if (function && runtime_prefix(name)) return R::overriding;
  return R::allowed;
}

bool shared_weak_instance(const std::string& name) {
  if (compiler_generated(name)) return true;
  const auto scope = scope_of(name);
  if (scope.size() < 2) return false;
  if (scope[0] == "gpulab") return scope[1] != "grade";
  return kLibraryNamespaces.count(scope[0]) > 0;
}

const std::vector<CompilerContext>& compiler_contexts() {
  // nvcc registers the fatbinary from __sti____cudaRegisterAll and hipcc from __hip_module_ctor;
  // both ask atexit to unregister it.
  static const std::vector<CompilerContext> contexts = {
      {"atexit", "_ZL24__sti____cudaRegisterAllv", "__cudaRegisterFatBinary"},
      {"atexit", "__hip_module_ctor", "__hipRegisterFatBinary"},
  };
  return contexts;
}

}  // namespace gpulab::grade::vetting::rules
