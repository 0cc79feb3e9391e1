#include "sandbox.hpp"

#include <glob.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

namespace fs = std::filesystem;

namespace gpulab::grade {
namespace {

// Tools are taken from the system's directories, never from a PATH someone could have changed.
std::string find_tool(const std::string& name) {
  const std::string found = detail::search_path(name, "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin");
  return found.find('/') == std::string::npos ? std::string() : found;
}

std::string quote(const std::string& s) {  // for sh: '...' with ' written as '\''
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string absolute(const std::string& p) {
  std::error_code ec;
  std::string a = fs::absolute(p, ec).lexically_normal().string();
  while (a.size() > 1 && a.back() == '/') a.pop_back();
  return a;
}

std::string real(const std::string& p) {  // symlinks resolved: what the mount table shows
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(absolute(p), ec);
  return ec ? absolute(p) : c.string();
}

bool exists(const std::string& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

bool is_dir(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

/// The system's separate debug files (Debian's *-dbg packages; valgrind pulls in libc's): hidden
/// (an empty tmpfs) from what runs inside. The emulator's symbolizer (libbacktrace) reads the debug
/// information of every library of the process when it first names a line, and libc's compressed
/// DWARF cost each runner about 0.15 s of CPU (lab 01's stub graded in 1.5 s with it, 1.2 s
/// without); findings and metrics name lines of the code under test, never of the C library.
constexpr const char* kSystemDebugDir = "/usr/lib/debug";

std::vector<std::string> expand_devices(const std::vector<std::string>& patterns) {
  std::vector<std::string> nodes;
  for (const auto& pattern : patterns) {
    glob_t g{};
    if (glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g) == 0)
      for (std::size_t i = 0; i < g.gl_pathc; ++i) nodes.push_back(g.gl_pathv[i]);
    globfree(&g);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

// Limits, environment, fds and output handling: the same in every mode.
detail::ChildPlan base_plan(const std::vector<std::string>& argv, const SandboxSpec& spec, bool echo) {
  detail::ChildPlan plan;
  for (const auto& [k, v] : spec.env) plan.envp.push_back(k + "=" + v);
  const double cpu = spec.cpu_seconds > 0 ? spec.cpu_seconds : 2 * spec.timeout_seconds;
  plan.rlimits.push_back({RLIMIT_CPU, static_cast<rlim_t>(std::max(1.0, std::ceil(cpu)))});
  if (spec.address_space_bytes) plan.rlimits.push_back({RLIMIT_AS, spec.address_space_bytes});
  if (spec.file_size_bytes) plan.rlimits.push_back({RLIMIT_FSIZE, spec.file_size_bytes});
  if (spec.max_processes > 0) plan.rlimits.push_back({RLIMIT_NPROC, static_cast<rlim_t>(spec.max_processes)});
  plan.rlimits.push_back({RLIMIT_CORE, 0});  // a crash must not leave a core file of GiBs
  plan.pass_fds = spec.pass_fds;
  plan.timeout_seconds = spec.timeout_seconds;
  plan.output_limit = spec.output_limit;
  plan.echo = echo;
  plan.argv = argv;
  return plan;
}

// ---- bubblewrap ---------------------------------------------------------------------------------

detail::ChildPlan bwrap_plan(const std::string& bwrap, const std::vector<std::string>& argv,
                             const SandboxSpec& spec, bool echo) {
  detail::ChildPlan plan = base_plan({}, spec, echo);
  plan.path = bwrap;
  plan.exit_status_encodes_signal = true;  // its init exits 128 + signal
  std::vector<std::string>& a = plan.argv;
  a = {bwrap, "--unshare-all", "--die-with-parent", "--new-session"};  // new session: no TIOCSTI
  if (spec.allow_network) a.push_back("--share-net");
  // Run by root, bwrap keeps every capability inside, and the child could remount the read-only
  // binds read-write: drop them all. (An unprivileged bwrap drops them itself.)
  if (getuid() == 0) a.insert(a.end(), {"--cap-drop", "ALL"});
  a.push_back("--clearenv");
  for (const auto& [k, v] : spec.env) a.insert(a.end(), {"--setenv", k, v});
  for (const char* dir : {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc"}) {
    std::error_code ec;
    if (fs::is_symlink(dir, ec))  // merged /usr: /lib -> usr/lib stays a link
      a.insert(a.end(), {"--symlink", fs::read_symlink(dir, ec).string(), dir});
    else if (fs::is_directory(dir, ec))
      a.insert(a.end(), {"--ro-bind", dir, dir});
  }
  if (is_dir(kSystemDebugDir)) a.insert(a.end(), {"--tmpfs", kSystemDebugDir});
  // GPU runtimes read the PCI and NUMA topology from /sys; nothing else needs it.
  if (!spec.devices.empty() && exists("/sys")) a.insert(a.end(), {"--ro-bind", "/sys", "/sys"});
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev"});
  for (const auto& node : expand_devices(spec.devices)) a.insert(a.end(), {"--dev-bind", node, node});
  a.insert(a.end(), {"--tmpfs", "/tmp"});  // before the binds: they may lie under /tmp
  for (const auto& p : spec.read_only)
    if (exists(p)) a.insert(a.end(), {"--ro-bind", absolute(p), absolute(p)});
  for (const auto& p : spec.writable) a.insert(a.end(), {"--bind", absolute(p), absolute(p)});
  if (!spec.workdir.empty()) a.insert(a.end(), {"--chdir", absolute(spec.workdir)});
  a.push_back("--");
  a.insert(a.end(), argv.begin(), argv.end());
  return plan;
}

// ---- unshare ------------------------------------------------------------------------------------

struct UnshareTools {
  std::string unshare, sh, setpriv, mount, findmnt, mkdir, touch, ln;
  bool can_remount() const { return !setpriv.empty() && !mount.empty() && !findmnt.empty() &&
                                    !mkdir.empty() && !touch.empty() && !ln.empty(); }
};

UnshareTools unshare_tools() {
  UnshareTools t;
  t.unshare = find_tool("unshare");
  t.sh = exists("/bin/sh") ? "/bin/sh" : find_tool("sh");
  t.setpriv = find_tool("setpriv");
  t.mount = find_tool("mount");
  t.findmnt = find_tool("findmnt");
  t.mkdir = find_tool("mkdir");
  t.touch = find_tool("touch");
  t.ln = find_tool("ln");
  return t;
}

// The wrapper script, run as root of the new user namespace (pid 1 of the new pid namespace).
// With `read_only`, it first gives the child a private /tmp and /dev, then remounts every mount
// read-only except the writable paths, and runs the program without any capability, so that it
// cannot undo any of it. Paths under /tmp and device nodes are reached through directory fds
// opened before the tmpfs covered them (/proc/self/fd/N/...), mount(8) told not to canonicalise.
// The program runs as a child of the shell, not in its place: the init of a pid namespace ignores
// the signals it has no handler for, so abort() or SIGXCPU would not end it as they should. The
// shell reports a signal death as 128 + signal, which run_child turns back into the signal.
std::string unshare_script(const UnshareTools& t, const SandboxSpec& spec, bool read_only) {
  std::vector<int> free_fds;  // single digits (all that sh accepts), none of the passed ones
  for (int fd = 3; fd <= 9; ++fd)
    if (std::find(spec.pass_fds.begin(), spec.pass_fds.end(), fd) == spec.pass_fds.end())
      free_fds.push_back(fd);
  if (free_fds.size() < 3) return "echo 'gpulab sandbox: too many passed fds below 10' >&2; exit 125\n";
  const std::string tmp_fd = std::to_string(free_fds[0]), dev_fd = std::to_string(free_fds[1]),
                    err_fd = std::to_string(free_fds[2]);
  const std::string M = quote(t.mount);
  std::string s = "set -e\n";
  if (read_only) {
    s += "exec " + tmp_fd + "</tmp " + dev_fd + "</dev\n";
    std::vector<std::string> writable, under_tmp;
    for (const auto& p : spec.writable) {
      writable.push_back(real(p));
      if (writable.back().rfind("/tmp/", 0) != 0)
        s += M + " --bind " + quote(writable.back()) + " " + quote(writable.back()) + "\n";
    }
    s += M + " -t tmpfs -o mode=1777,nosuid,nodev gpulab-tmp /tmp\n";
    auto rebind_from_tmp = [&](const std::string& p) {  // only what lies under /tmp
      if (p.rfind("/tmp/", 0) != 0 || !exists(p)) return;
      s += std::string(is_dir(p) ? quote(t.mkdir) + " -p " : quote(t.touch) + " ") + quote(p) + "\n";
      s += M + " --no-canonicalize --bind /proc/self/fd/" + tmp_fd + "/" + quote(p.substr(5)) + " " + quote(p) + "\n";
    };
    for (const auto& p : spec.read_only) rebind_from_tmp(real(p));
    for (const auto& p : writable) rebind_from_tmp(p);
    if (is_dir(kSystemDebugDir)) s += M + " -t tmpfs -o mode=755,nosuid,nodev gpulab-nodebug " + kSystemDebugDir + "\n";
    s += M + " -t tmpfs -o mode=755,nosuid gpulab-dev /dev\n";
    s += quote(t.mkdir) + " /dev/shm\n" + M + " -t tmpfs -o mode=1777,nosuid,nodev gpulab-shm /dev/shm\n";
    for (const char* l : {"fd:/proc/self/fd", "stdin:/proc/self/fd/0", "stdout:/proc/self/fd/1", "stderr:/proc/self/fd/2"}) {
      const std::string link = l;
      s += quote(t.ln) + " -s " + link.substr(link.find(':') + 1) + " /dev/" + link.substr(0, link.find(':')) + "\n";
    }
    std::vector<std::string> nodes = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"};
    for (const auto& d : expand_devices(spec.devices)) nodes.push_back(real(d));
    for (const auto& n : nodes) {
      if (n.rfind("/dev/", 0) != 0 || !exists(n)) continue;
      const bool dir = is_dir(n);
      s += quote(t.mkdir) + " -p " + quote(dir ? n : fs::path(n).parent_path().string()) + "\n";
      if (!dir) s += quote(t.touch) + " " + quote(n) + "\n";
      s += M + " --no-canonicalize --bind /proc/self/fd/" + dev_fd + "/" + quote(n.substr(5)) + " " + quote(n) + "\n";
    }
    s += "exec " + tmp_fd + "<&- " + dev_fd + "<&-\n";
    s += quote(t.findmnt) + " -rn -o TARGET | while read -r m; do\n  case \"$m\" in /proc|/proc/*|/dev|/dev/*|/tmp";
    for (const auto& w : writable) s += "|" + quote(w);
    s += ") continue;; esac\n  " + M + " -o remount,bind,ro \"$m\" 2>/dev/null ||"
         " { echo \"gpulab sandbox: cannot make $m read-only\" >&2; exit 125; }\ndone\n";
  }
  if (!spec.workdir.empty()) s += "cd " + quote(real(spec.workdir)) + "\n";
  // The shell's own messages ("Killed", ...) go nowhere; the program's stderr is the pipe.
  s += "exec " + err_fd + ">&2 2>/dev/null\n";
  if (!t.setpriv.empty()) s += quote(t.setpriv) + " --no-new-privs --inh-caps=-all --bounding-set=-all -- ";
  s += "\"$@\" 2>&" + err_fd + " " + err_fd + ">&- &\nwait $!\n";
  return s;
}

detail::ChildPlan unshare_plan(const UnshareTools& t, bool read_only, const std::vector<std::string>& argv,
                               const SandboxSpec& spec, bool echo) {
  detail::ChildPlan plan = base_plan({}, spec, echo);
  plan.path = t.unshare;
  plan.exit_status_encodes_signal = true;
  plan.argv = {t.unshare, "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc",
               "--ipc", "--uts"};
  if (!spec.allow_network) plan.argv.push_back("--net");
  plan.argv.insert(plan.argv.end(), {t.sh, "-c", unshare_script(t, spec, read_only), "gpulab-sandbox"});
  plan.argv.insert(plan.argv.end(), argv.begin(), argv.end());
  return plan;
}

// ---- rlimits ------------------------------------------------------------------------------------

detail::ChildPlan rlimits_plan(const std::vector<std::string>& argv, const SandboxSpec& spec, bool echo) {
  detail::ChildPlan plan = base_plan(argv, spec, echo);
  const auto path = spec.env.find("PATH");  // the child's PATH, not the grader's
  plan.path = argv.empty() ? "" : detail::search_path(argv[0], path == spec.env.end() ? "" : path->second);
  if (!spec.workdir.empty()) plan.workdir = absolute(spec.workdir);
  return plan;
}

// ---- probing ------------------------------------------------------------------------------------

enum class Variant { bwrap, unshare_read_only, unshare_plain, rlimits };

detail::ChildPlan plan_for(Variant v, const std::vector<std::string>& argv, const SandboxSpec& spec, bool echo) {
  switch (v) {
    case Variant::bwrap: return bwrap_plan(find_tool("bwrap"), argv, spec, echo);
    case Variant::unshare_read_only: return unshare_plan(unshare_tools(), true, argv, spec, echo);
    case Variant::unshare_plain: return unshare_plan(unshare_tools(), false, argv, spec, echo);
    case Variant::rlimits: break;
  }
  return rlimits_plan(argv, spec, echo);
}

bool runs(Variant v) {
  SandboxSpec spec;
  spec.env["PATH"] = "/usr/bin:/bin";
  spec.timeout_seconds = 20;
  return detail::run_child(plan_for(v, {"true"}, spec, false)).ok();
}

struct Probed {
  IsolationInfo info;
  Variant variant = Variant::rlimits;
};

Probed probe(Isolation mode) {
  Probed p;
  IsolationInfo& i = p.info;
  if (mode == Isolation::bubblewrap) {
    if (find_tool("bwrap").empty() || !runs(Variant::bwrap)) return p;
    p.variant = Variant::bwrap;
    i = {true, true, true, true, true,
         "bubblewrap (user, pid, mount, ipc, uts, cgroup and network namespaces; only the system and listed paths "
         "exist, read-only except the writable ones; private /tmp and /dev; no capabilities)"};
  } else if (mode == Isolation::unshare) {
    const UnshareTools t = unshare_tools();
    if (t.unshare.empty() || t.sh.empty()) return p;
    if (t.can_remount() && runs(Variant::unshare_read_only)) {
      p.variant = Variant::unshare_read_only;
      i = {true, true, false, true, true,
           "unshare (user, pid, mount, ipc, uts and network namespaces; file system read-only except "
           "the writable paths, private /tmp and /dev; no capabilities)"};
    } else if (runs(Variant::unshare_plain)) {
      p.variant = Variant::unshare_plain;
      i = {true, false, false, true, true, "unshare (user, pid, ipc, uts and network namespaces; tree writable)"};
    }
  } else {
    i = {true, false, false, false, false,
         "rlimits (own session, resource limits, clean environment; descendants stopped at the end; "
         "no namespaces: the file system, the network and the grader's processes are reachable)"};
  }
  return p;
}

const Probed& probed(Isolation mode) {
  static std::mutex mutex;
  static Probed cache[3];
  static bool done[3] = {false, false, false};
  const std::lock_guard<std::mutex> lock(mutex);
  const int k = static_cast<int>(mode);
  if (!done[k]) {
    cache[k] = probe(mode);
    done[k] = true;
  }
  return cache[k];
}

}  // namespace

std::string to_string(Isolation mode) {
  switch (mode) {
    case Isolation::bubblewrap: return "bubblewrap";
    case Isolation::unshare: return "unshare";
    case Isolation::rlimits: break;
  }
  return "rlimits";
}

IsolationInfo isolation_info(Isolation mode) { return probed(mode).info; }

Isolation best_isolation() {
  for (Isolation m : {Isolation::bubblewrap, Isolation::unshare})
    if (isolation_info(m).available) return m;
  return Isolation::rlimits;
}

ProcessResult run_sandboxed(const std::vector<std::string>& argv, const SandboxSpec& spec, bool echo) {
  return run_sandboxed(best_isolation(), argv, spec, echo);
}

ProcessResult run_sandboxed(Isolation mode, const std::vector<std::string>& argv, const SandboxSpec& spec,
                            bool echo) {
  const Probed& p = probed(mode);
  ProcessResult r;
  if (!p.info.available || argv.empty()) {
    r.output = argv.empty() ? "nothing to run" : "the " + to_string(mode) + " sandbox does not work on this machine";
    r.isolation = to_string(mode) + " (unavailable)";
    return r;
  }
  for (const auto& w : spec.writable) {  // "created if missing", as the grader's user
    std::error_code ec;
    fs::create_directories(w, ec);
  }
  r = detail::run_child(plan_for(p.variant, argv, spec, echo));
  r.isolation = p.info.description + (spec.allow_network && p.info.private_network ? " (network shared)" : "");
  const double cpu = spec.cpu_seconds > 0 ? spec.cpu_seconds : 2 * spec.timeout_seconds;
  r.cpu_limit_seconds = std::max(1.0, std::ceil(cpu));
  r.memory_limit_bytes = spec.address_space_bytes;
  r.file_size_limit_bytes = spec.file_size_bytes;
  return r;
}

}  // namespace gpulab::grade
