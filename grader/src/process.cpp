#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace gpulab::grade {

std::string ProcessResult::describe() const {
  if (timed_out) return "did not finish within the time limit and was stopped";
  if (signal) {
    std::string name = strsignal(signal) ? strsignal(signal) : "signal";
    return "was killed by signal " + std::to_string(signal) + " (" + name + ")";
  }
  return "exited with status " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, double timeout_seconds,
                          bool echo) {
  ProcessResult r;
  int fds[2];
  if (pipe(fds) != 0) {
    r.output = "cannot create a pipe";
    return r;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a time-out kills everything it started
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  int status = 0;
  bool exited = false;
  char buf[8192];
  auto drain = [&] {
    for (;;) {
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      r.output.append(buf, static_cast<std::size_t>(n));
      if (echo) fwrite(buf, 1, static_cast<std::size_t>(n), stdout);
      if (r.output.size() > (128u << 10)) r.output.erase(0, r.output.size() - (64u << 10));
    }
  };
  while (!exited) {
    drain();
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      exited = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(-pid, SIGKILL);  // anything the child left behind in its group
  drain();
  close(fds[0]);
  if (!r.timed_out) {
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  return r;
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

}  // namespace gpulab::grade
