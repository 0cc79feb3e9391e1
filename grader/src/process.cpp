#include "process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

extern char** environ;

namespace gpulab::grade {
namespace {

using Clock = std::chrono::steady_clock;

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

bool mentions_memory_exhaustion(const std::string& output) {
  for (const char* marker : {"std::bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory"})
    if (output.find(marker) != std::string::npos) return true;
  return false;
}

// ---- The process tree, read from /proc --------------------------------------------------------

struct ProcEntry {
  pid_t pid;
  pid_t ppid;
  char state;
};

// Every process visible in /proc with its parent and state. The command name in /proc/PID/stat is
// in parentheses and may itself hold spaces and parentheses: the fields start after the last ')'.
std::vector<ProcEntry> scan_proc() {
  std::vector<ProcEntry> all;
  DIR* dir = opendir("/proc");
  if (!dir) return all;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end) continue;
    char path[64], buf[1024];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // gone meanwhile
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    const char* paren = std::strrchr(buf, ')');
    char state = 0;
    long ppid = 0;
    if (!paren || std::sscanf(paren + 1, " %c %ld", &state, &ppid) != 2) continue;
    all.push_back({static_cast<pid_t>(pid), static_cast<pid_t>(ppid), state});
  }
  closedir(dir);
  return all;
}

// Runs in progress in this process (other threads): their children are not orphans of ours. The
// grader is the subreaper while any run is in progress (the first sets it, the last restores it).
struct Runs {
  std::mutex mutex;
  std::set<pid_t> children;
  int active = 0;
  int previous_subreaper = 0;
};
Runs& runs() {
  static Runs r;
  return r;
}

std::set<pid_t> children_of_self() {
  std::set<pid_t> kids;
  for (const ProcEntry& p : scan_proc())
    if (p.ppid == getpid()) kids.insert(p.pid);
  return kids;
}

// Kills every process of the run and reaps the ones that are the grader's children; returns how
// many could not be stopped within `budget` (a process in uninterruptible sleep, e.g. in a
// driver). The run's processes are the child (while not reaped) and the grader's children that
// were not there before the run: since the grader is their child subreaper, a process whose
// parent died (a double-forked daemon, an escaped grandchild) is re-parented to the grader
// instead of init, so nothing of the tree can get out of this search.
int stop_tree(pid_t child, bool child_reaped, const std::set<pid_t>& preexisting,
              std::chrono::milliseconds budget) {
  if (!child_reaped) kill(child, SIGKILL);
  kill(-child, SIGKILL);  // its session's process group (pgid == pid after setsid)
  const auto give_up = Clock::now() + budget;
  const pid_t self = getpid();
  for (;;) {
    const std::vector<ProcEntry> all = scan_proc();
    std::vector<pid_t> frontier, members;
    std::set<pid_t> others;
    {
      const std::lock_guard<std::mutex> lock(runs().mutex);
      others = runs().children;
    }
    others.erase(child);
    for (const ProcEntry& p : all)
      if ((p.pid == child && !child_reaped) ||
          (p.ppid == self && !preexisting.count(p.pid) && !others.count(p.pid)))
        frontier.push_back(p.pid);
    std::set<pid_t> seen(frontier.begin(), frontier.end());
    while (!frontier.empty()) {  // breadth-first down the ppid links
      const pid_t p = frontier.back();
      frontier.pop_back();
      members.push_back(p);
      for (const ProcEntry& q : all)
        if (q.ppid == p && seen.insert(q.pid).second) frontier.push_back(q.pid);
    }
    int alive = 0;
    for (const ProcEntry& p : all) {
      if (!seen.count(p.pid)) continue;
      if (p.state != 'Z' && p.state != 'X') {
        kill(p.pid, SIGKILL);
        ++alive;
      }
      if (p.ppid == self) waitpid(p.pid, nullptr, WNOHANG);  // reap ours (zombies, the dead)
    }
    if (members.empty()) return 0;
    if (Clock::now() > give_up) return alive;
    std::this_thread::sleep_for(std::chrono::milliseconds(alive ? 2 : 1));
  }
}

// ---- The child side (after fork: async-signal-safe calls only) ----------------------------------

void close_other_fds(const std::vector<int>& keep_sorted) {
  int from = 3;
  auto close_range_fds = [](int lo, int hi) {  // [lo, hi]
#ifdef SYS_close_range
    if (syscall(SYS_close_range, static_cast<unsigned>(lo), static_cast<unsigned>(hi), 0u) == 0) return;
#endif
    const long max = std::min<long>(sysconf(_SC_OPEN_MAX), 1 << 16);
    for (long fd = lo; fd <= std::min<long>(hi, max); ++fd) close(static_cast<int>(fd));
  };
  for (int fd : keep_sorted) {
    if (fd < from) continue;
    if (fd > from) close_range_fds(from, fd - 1);
    from = fd + 1;
  }
  close_range_fds(from, 0x7fffffff);
}

void write_str(int fd, const char* s) {
  if (write(fd, s, std::strlen(s)) < 0) {
  }
}

[[noreturn]] void exec_child(const detail::ChildPlan& plan, char* const* argv, char* const* envp,
                             const std::vector<int>& keep, int devnull, int out, pid_t parent) {
  setsid();  // its own session and process group: the grader's group is not its own
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);  // ignored signals survive exec
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the grader dying takes the child with it...
  if (getppid() != parent) _exit(127);  // ...even when that happened before the prctl
  dup2(devnull, 0);
  dup2(out, 1);
  dup2(out, 2);
  for (int fd : keep) fcntl(fd, F_SETFD, 0);  // no FD_CLOEXEC: it must survive exec
  close_other_fds(keep);
  for (const auto& [resource, value] : plan.rlimits) {
    rlimit now{};
    getrlimit(resource, &now);
    // RLIMIT_CPU: SIGXCPU at the soft limit (reportable), SIGKILL a second later.
    rlim_t hard = resource == RLIMIT_CPU ? value + 1 : value;
    rlimit lim{std::min(value, now.rlim_max), std::min(hard, now.rlim_max)};
    setrlimit(resource, &lim);
  }
  if (!plan.workdir.empty() && chdir(plan.workdir.c_str()) != 0) {
    write_str(2, "cannot enter the working directory ");
    write_str(2, plan.workdir.c_str());
    write_str(2, "\n");
    _exit(127);
  }
  execve(plan.path.c_str(), argv, envp);
  const int err = errno;
  write_str(2, "cannot run ");
  write_str(2, plan.path.c_str());
  write_str(2, ": ");
  write_str(2, std::strerror(err));
  write_str(2, "\n");
  _exit(127);
}

}  // namespace

std::string ProcessResult::describe() const {
  if (timed_out) return "did not finish within the time limit and was stopped";
  const bool cpu_exceeded = cpu_limit_seconds > 0 && cpu_seconds_used >= cpu_limit_seconds - 0.05;
  std::string why;
  if (signal) {
    const char* name = strsignal(signal);
    why = "was killed by signal " + std::to_string(signal) + " (" + (name ? name : "signal") + ")";
    if (signal == SIGXCPU || (signal == SIGKILL && cpu_exceeded))
      return why + ": it used more than its CPU time limit (" + seconds(cpu_limit_seconds) + ")";
    if (signal == SIGXFSZ)
      return why + ": it wrote a file larger than the limit (" + mib(file_size_limit_bytes) + ")";
  } else {
    why = "exited with status " + std::to_string(exit_code);
  }
  // Under RLIMIT_AS an allocation fails rather than the kernel killing anything: the program
  // aborts (std::bad_alloc), exits after a failed malloc, or crashes on a null pointer. Its output
  // tells which; say it plainly, since "killed by signal 6" alone sends students on a bug hunt.
  if (exit_code != 0 && memory_limit_bytes > 0 && mentions_memory_exhaustion(output))
    why += ": it ran out of its memory limit (" + mib(memory_limit_bytes) + ")";
  return why;
}

std::string tail_lines(const std::string& text, int lines) {
  std::size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  std::size_t end = pos;
  for (int i = 0; i < lines && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  return text.substr(pos == 0 ? 0 : pos + 1, end - (pos == 0 ? 0 : pos + 1));
}

namespace detail {

std::string search_path(const std::string& name, const std::string& path_list) {
  if (name.empty() || name.find('/') != std::string::npos) return name;
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = path_list.find(':', start);
    std::string dir = path_list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) return name;
    start = colon + 1;
  }
}

namespace {

/// A child's run in progress: what run_child's steps share.
struct ChildRun {
  explicit ChildRun(const ChildPlan& p) : plan(p) {}

  const ChildPlan& plan;
  ProcessResult r;
  int fds[2] = {-1, -1};  ///< the pipe of the child's output (stdout and stderr)
  int devnull = -1;       ///< the child's stdin
  pid_t pid = -1;
  std::set<pid_t> preexisting;  ///< the grader's children before the run (stop_tree)
  bool pipe_open = true;        ///< until every writer closed it
  char buf[65536];
  int status = 0;
  bool reaped = false;
  rusage usage{};
};

/// Ends the run's part in runs(): its child forgotten, the subreaper setting restored after the last run.
void end_run(pid_t pid) {
  const std::lock_guard<std::mutex> lock(runs().mutex);
  runs().children.erase(pid);
  if (--runs().active == 0) prctl(PR_SET_CHILD_SUBREAPER, runs().previous_subreaper);
}

/// Opens the child's stdin and its output's pipe; false, with why in run.r.output, where it cannot.
bool open_pipe(ChildRun& run) {
  run.devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (run.devnull < 0 || pipe2(run.fds, O_CLOEXEC) != 0) {
    if (run.devnull >= 0) close(run.devnull);
    run.r.output = "cannot create a pipe for the child's output";
    return false;
  }
  return true;
}

/// Forks the child that runs the plan; false, with why in run.r.output, where it cannot.
bool start_child(ChildRun& run) {
  const ChildPlan& plan = run.plan;
  // Everything the child needs is built here: after fork() it may not allocate.
  std::vector<char*> argv, envp;
  for (const auto& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : plan.envp) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::vector<int> keep = plan.pass_fds;
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  keep.erase(std::remove_if(keep.begin(), keep.end(), [](int fd) { return fd < 3; }), keep.end());

  if (!open_pipe(run)) return false;
  // Become the child subreaper for the run's duration (see stop_tree), remembering the setting.
  run.preexisting = children_of_self();
  pid_t pid;
  {
    const std::lock_guard<std::mutex> lock(runs().mutex);
    if (runs().active++ == 0) {
      prctl(PR_GET_CHILD_SUBREAPER, &runs().previous_subreaper);
      prctl(PR_SET_CHILD_SUBREAPER, 1);
    }
    const pid_t parent = getpid();
    pid = fork();
    if (pid == 0) exec_child(plan, argv.data(), envp.data(), keep, run.devnull, run.fds[1], parent);
    if (pid > 0) runs().children.insert(pid);
  }
  run.pid = pid;
  close(run.fds[1]);
  close(run.devnull);
  if (pid < 0) {
    close(run.fds[0]);
    end_run(pid);
    run.r.output = std::string("cannot fork: ") + std::strerror(errno);
    return false;
  }
  fcntl(run.fds[0], F_SETFL, O_NONBLOCK);
  return true;
}

/// Moves what the child wrote into run.r.output (and to stdout where the plan echoes it).
void drain(ChildRun& run) {
  const ChildPlan& plan = run.plan;
  ProcessResult& r = run.r;
  // Reads whatever is there without blocking; keeps the tail only, trimming in big steps so that
  // a chatty child does not cost a copy of the whole buffer for every read.
  while (run.pipe_open) {
    const ssize_t n = read(run.fds[0], run.buf, sizeof run.buf);
    if (n == 0) run.pipe_open = false;  // every writer closed it
    if (n <= 0) break;
    r.output.append(run.buf, static_cast<std::size_t>(n));
    if (plan.echo) {
      std::fwrite(run.buf, 1, static_cast<std::size_t>(n), stdout);
      std::fflush(stdout);
    }
    if (r.output.size() > 2 * plan.output_limit + sizeof run.buf) {
      r.output.erase(0, r.output.size() - plan.output_limit);
      r.output_truncated = true;
    }
  }
}

/// Collects the child's output until it ends (reaped, or gone) or its time is up (run.r.timed_out).
void wait_for_child(ChildRun& run) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(run.plan.timeout_seconds));
  for (;;) {
    // Wake up for output, or every 20 ms to look at the child and the clock: a child that closed
    // its output (POLLHUP, then no fd to wait on) or never stops writing is still timed out.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const int wait_ms = static_cast<int>(std::clamp<long long>(left.count(), 0, 20));
    pollfd pfd{run.fds[0], POLLIN, 0};
    if (poll(&pfd, run.pipe_open ? 1 : 0, wait_ms) < 0 && errno != EINTR) break;
    drain(run);
    const pid_t w = wait4(run.pid, &run.status, WNOHANG, &run.usage);
    if (w == run.pid || (w < 0 && errno == ECHILD)) {
      run.reaped = w == run.pid;
      break;
    }
    if (Clock::now() >= deadline) {
      run.r.timed_out = true;
      break;
    }
  }
}

/// Stops what is left of the run, takes the rest of its output and fills in how the child ended.
void finish_run(ChildRun& run) {
  const ChildPlan& plan = run.plan;
  ProcessResult& r = run.r;
  // Whatever the child left behind (daemons, background jobs, a namespace's init) goes now; then
  // the rest of the output, all writers being dead.
  const int survivors = stop_tree(run.pid, run.reaped, run.preexisting, std::chrono::seconds(5));
  end_run(run.pid);
  const auto drain_until = Clock::now() + std::chrono::seconds(1);
  while (run.pipe_open && Clock::now() < drain_until) {
    pollfd pfd{run.fds[0], POLLIN, 0};
    poll(&pfd, 1, 10);
    drain(run);
  }
  close(run.fds[0]);
  if (r.output.size() > plan.output_limit) {
    r.output.erase(0, r.output.size() - plan.output_limit);
    r.output_truncated = true;
  }
  if (survivors > 0)
    r.output += "\n[gpulab: " + std::to_string(survivors) + " process(es) of the run could not be stopped]\n";
  r.cpu_seconds_used = static_cast<double>(run.usage.ru_utime.tv_sec + run.usage.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(run.usage.ru_utime.tv_usec + run.usage.ru_stime.tv_usec);
  if (run.reaped && !r.timed_out) {
    if (WIFEXITED(run.status)) r.exit_code = WEXITSTATUS(run.status);
    if (WIFSIGNALED(run.status)) r.signal = WTERMSIG(run.status);
    if (plan.exit_status_encodes_signal && r.exit_code > 128 && r.exit_code < 128 + NSIG) {
      r.signal = r.exit_code - 128;
      r.exit_code = -1;
    }
  }
}

}  // namespace

ProcessResult run_child(const ChildPlan& plan) {
  ChildRun run(plan);
  if (!start_child(run)) return run.r;
  wait_for_child(run);
  finish_run(run);
  return run.r;
}

}  // namespace detail

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, double timeout_seconds,
                          bool echo) {
  detail::ChildPlan plan;
  const char* path = std::getenv("PATH");
  plan.path = argv.empty() ? "" : detail::search_path(argv[0], path ? path : "/usr/bin:/bin");
  plan.argv = argv;
  // The grader's environment with `env` on top (a trusted command needs the user's settings).
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    if (!env.count(entry.substr(0, entry.find('=')))) plan.envp.push_back(entry);
  }
  for (const auto& [k, v] : env) plan.envp.push_back(k + "=" + v);
  plan.timeout_seconds = timeout_seconds;
  plan.echo = echo;
  ProcessResult r = detail::run_child(plan);
  r.isolation = "none (a trusted command: own session, descendants stopped at the end)";
  return r;
}

}  // namespace gpulab::grade
