// The sandbox that runs hand-ins (grader/src/sandbox.hpp), in every isolation mode that works on
// this machine: each test makes a child misbehave and checks what the grader sees afterwards.
// The misbehaving programs are this test binary itself, started with GPULAB_SANDBOX_TEST_HELPER
// set: a static initialiser then plays the part and exits before GoogleTest's main runs.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "process.hpp"
#include "record_channel.hpp"
#include "sandbox.hpp"

namespace fs = std::filesystem;
using namespace gpulab::grade;

namespace {

// ---- The helper's parts ---------------------------------------------------------------------------

void* volatile sink;  // a volatile global: the allocation cannot be optimised away

int helper(const std::string& what, const std::string& arg) {
  if (what == "alloc") {  // 100 GiB: fails under RLIMIT_AS, uncaught std::bad_alloc
    sink = std::malloc(100ull << 30);
    if (!sink) throw std::bad_alloc();
    std::puts("allocated");
    return 0;
  }
  if (what == "daemon" || what == "daemon-and-wait") {  // double fork + setsid: a classic daemon
    const pid_t middle = fork();
    if (middle == 0) {
      setsid();
      if (fork() == 0) {
        for (;;) pause();
      }
      _exit(0);
    }
    waitpid(middle, nullptr, 0);
    std::puts("daemon started");
    std::fflush(stdout);
    if (what == "daemon-and-wait")
      for (;;) pause();
    return 0;
  }
  if (what == "write-fd") {
    const std::string text = "through the passed fd\n";
    return write(std::atoi(arg.c_str()), text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : 4;
  }
  if (what == "write-fd-mib") {  // "FD:MIB": that many MiB of 0x5A bytes to a passed fd
    const std::vector<char> mib(1 << 20, 0x5A);
    const int fd = std::atoi(arg.c_str());
    for (int i = std::atoi(arg.c_str() + arg.find(':') + 1); i > 0; --i)
      for (std::size_t done = 0; done < mib.size();) {
        const ssize_t w = write(fd, mib.data() + done, mib.size() - done);
        if (w <= 0) return 4;
        done += static_cast<std::size_t>(w);
      }
    return 0;
  }
  if (what == "binary") {
    const char bytes[] = {'a', 0, 'b', '\xff', '\xfe', '\xc3', '\x28', 0, '\n'};
    return write(1, bytes, sizeof bytes) == sizeof bytes ? 0 : 4;
  }
  if (what == "connect") {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(std::atoi(arg.c_str())));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      std::puts("connected");
      return 0;
    }
    std::printf("cannot connect: %s\n", std::strerror(errno));
    return 3;
  }
  if (what == "spin") {
    for (volatile unsigned long i = 0;; i = i + 1) {
    }
  }
  std::fprintf(stderr, "unknown helper %s\n", what.c_str());
  return 2;
}

const bool helper_ran = [] {
  const char* what = std::getenv("GPULAB_SANDBOX_TEST_HELPER");
  if (!what) return false;
  const char* arg = std::getenv("GPULAB_SANDBOX_TEST_ARG");
  std::exit(helper(what, arg ? arg : ""));
}();

// ---- The fixture ----------------------------------------------------------------------------------

std::string self_exe() { return fs::read_symlink("/proc/self/exe").string(); }

// Processes whose command line holds `token` (the helpers get it as an argument).
int processes_with(const std::string& token) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(token) != std::string::npos && e.path().filename() != std::to_string(getpid())) ++n;
  }
  return n;
}

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<std::size_t>(n));
  return s;
}

class Sandbox : public ::testing::TestWithParam<Isolation> {
 protected:
  void SetUp() override {
    const IsolationInfo info = isolation_info(GetParam());
    if (!info.available) GTEST_SKIP() << to_string(GetParam()) << " does not run on this machine";
    char tmpl[] = "/tmp/gpulab-sandbox-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root = tmpl;
    writable = root / "work";
    read_only = root / "ro";
    hidden = root / "hidden";
    fs::create_directories(read_only);
    fs::create_directories(hidden);
    spec.read_only = {read_only.string(), fs::path(self_exe()).parent_path().string()};
    spec.writable = {writable.string()};
    spec.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", writable.string()}};
    spec.timeout_seconds = 20;
  }
  void TearDown() override {
    std::error_code ec;
    if (!root.empty()) fs::remove_all(root, ec);
  }
  ProcessResult sh(const std::string& script) { return run_sandboxed(GetParam(), {"sh", "-c", script}, spec); }
  ProcessResult helper(const std::string& what, const std::string& arg = "", const std::string& token = "") {
    SandboxSpec s = spec;
    s.env["GPULAB_SANDBOX_TEST_HELPER"] = what;
    s.env["GPULAB_SANDBOX_TEST_ARG"] = arg;
    return run_sandboxed(GetParam(), {self_exe(), "helper", token}, s);
  }
  bool namespaces() const { return GetParam() != Isolation::rlimits; }

  fs::path root, writable, read_only, hidden;
  SandboxSpec spec;
};

std::string token() { return "gpulab-token-" + std::to_string(getpid()) + "-" + std::to_string(std::rand()); }

// ---- The tests ------------------------------------------------------------------------------------

TEST_P(Sandbox, RunsAndReportsExitStatusSignalAndIsolation) {
  ProcessResult r = sh("echo hello; exit 3");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(r.output, "hello\n");
  EXPECT_EQ(r.isolation, isolation_info(GetParam()).description);
  r = sh("kill -SEGV $$");
  EXPECT_EQ(r.signal, SIGSEGV) << r.describe() << r.output;
  EXPECT_NE(r.describe().find("killed by signal 11"), std::string::npos) << r.describe();
  r = sh("exit 0");
  EXPECT_TRUE(r.ok()) << r.describe() << r.output;
}

TEST_P(Sandbox, TimeoutKillsAnInfiniteLoop) {
  spec.timeout_seconds = 1;
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = sh("while :; do :; done");
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
}

TEST_P(Sandbox, NoDoubleForkedDaemonSurvives) {
  const std::string t1 = token();
  ProcessResult r = helper("daemon", "", t1);  // returns at once, the daemon sleeping on
  EXPECT_TRUE(r.ok()) << r.describe() << r.output;
  EXPECT_NE(r.output.find("daemon started"), std::string::npos) << r.output;
  EXPECT_EQ(processes_with(t1), 0);
  const std::string t2 = token();
  spec.timeout_seconds = 1;
  r = helper("daemon-and-wait", "", t2);  // the time limit ends it
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(processes_with(t2), 0);
}

TEST_P(Sandbox, AChildThatClosesItsOutputIsStillTimedOut) {
  spec.timeout_seconds = 1;
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = sh("exec >&- 2>&-; sleep 100");
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
}

TEST_P(Sandbox, AChildThatWritesForeverIsTimedOutAndItsOutputCut) {
  spec.timeout_seconds = 3;  // the unshare mode's set-up alone can take a second on a busy machine
  spec.output_limit = 4096;
  const ProcessResult r = run_sandboxed(GetParam(), {"yes", "spam"}, spec);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.output_truncated);
  EXPECT_LE(r.output.size(), 4096u);
}

TEST_P(Sandbox, OutputKeepsTheTail) {
  spec.output_limit = 1000;
  const ProcessResult r = sh("seq 1 200000");
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_TRUE(r.output_truncated);
  EXPECT_EQ(r.output.size(), 1000u);
  EXPECT_EQ(r.output.substr(r.output.size() - 14), "199999\n200000\n");
}

TEST_P(Sandbox, OutputIsBytes) {
  const ProcessResult r = helper("binary");
  EXPECT_TRUE(r.ok()) << r.describe() << r.output;
  EXPECT_EQ(r.output, std::string("a\0b\xff\xfe\xc3\x28\0\n", 9));
  EXPECT_FALSE(r.output_truncated);
}

TEST_P(Sandbox, WritableIsWritable) {
  const ProcessResult r = sh("echo made > " + (writable / "out.txt").string());
  EXPECT_TRUE(r.ok()) << r.describe() << r.output;
  std::ifstream in(writable / "out.txt");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "made");
}

TEST_P(Sandbox, WritesOutsideWritableFail) {
  if (!isolation_info(GetParam()).read_only_tree) GTEST_SKIP() << "the file system is writable in this mode";
  for (const fs::path& dir : {read_only, hidden, fs::path(self_exe()).parent_path()}) {
    const fs::path file = dir / ("forged-" + std::to_string(getpid()));
    const ProcessResult r = sh("echo forged > " + file.string());
    EXPECT_FALSE(r.ok()) << file;
    EXPECT_FALSE(fs::exists(file)) << file;
  }
  if (isolation_info(GetParam()).hidden_tree) {  // not listed: not there at all
    const ProcessResult r = sh("test -e " + hidden.string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
  }
}

TEST_P(Sandbox, TheReadOnlyTreeCannotBeRemountedWritable) {
  // Root of its user namespace, with capabilities it could simply remount: they must be gone.
  if (!isolation_info(GetParam()).read_only_tree) GTEST_SKIP() << "the file system is writable in this mode";
  const fs::path file = read_only / "forged";
  const ProcessResult r = sh("mount -o remount,rw,bind " + read_only.string() + " && echo forged > " + file.string());
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_FALSE(fs::exists(file));
  EXPECT_NE(sh("grep CapEff /proc/self/status").output.find("0000000000000000"), std::string::npos);
}

TEST_P(Sandbox, SystemDebugFilesAreHidden) {
  // Debian's separate debug files (libc's, which valgrind pulls in): an empty directory inside.
  if (!isolation_info(GetParam()).read_only_tree) GTEST_SKIP() << "no mount namespace of its own in this mode";
  std::error_code ec;
  if (!fs::is_directory("/usr/lib/debug", ec)) GTEST_SKIP() << "no /usr/lib/debug on this machine";
  const ProcessResult r = sh("ls -A /usr/lib/debug | wc -l");
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, "0\n");
}

TEST_P(Sandbox, WorkdirIsTheCurrentDirectory) {
  spec.workdir = writable.string();
  const ProcessResult r = sh("pwd");
  EXPECT_EQ(r.output, fs::canonical(writable).string() + "\n");
}

TEST_P(Sandbox, EnvironmentIsClean) {
  setenv("GPULAB_SANDBOX_SECRET", "leaked", 1);
  spec.env["GPULAB_GIVEN"] = "given";
  const ProcessResult r = run_sandboxed(GetParam(), {"env"}, spec);
  unsetenv("GPULAB_SANDBOX_SECRET");
  EXPECT_TRUE(r.ok()) << r.describe() << r.output;
  EXPECT_EQ(r.output.find("leaked"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GPULAB_GIVEN=given\n"), std::string::npos) << r.output;
}

TEST_P(Sandbox, NetworkIsAbsent) {
  if (!isolation_info(GetParam()).private_network) GTEST_SKIP() << "no network namespace in this mode";
  // A server on the grader's loopback, which the child must not reach.
  const int server = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(server, 4), 0);
  ASSERT_EQ(getsockname(server, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string port = std::to_string(ntohs(a.sin_port));
  ProcessResult r = helper("connect", port);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  r = sh("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");  // the interfaces it sees
  EXPECT_EQ(r.output, "lo\n");
  spec.allow_network = true;  // and the control: with the network allowed, it connects
  r = helper("connect", port);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  close(server);
}

TEST_P(Sandbox, AddressSpaceLimitStopsAHugeAllocation) {
  spec.address_space_bytes = 1ull << 30;
  const ProcessResult r = helper("alloc");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.output.find("allocated"), std::string::npos) << r.output;
  EXPECT_NE(r.describe().find("it ran out of its memory limit (1024 MiB)"), std::string::npos) << r.describe();
}

TEST_P(Sandbox, FileSizeLimitStopsABigFile) {
  spec.file_size_bytes = 1u << 20;
  const fs::path big = writable / "big";
  const ProcessResult r = sh("exec head -c 3000000 /dev/zero > " + big.string());
  EXPECT_EQ(r.signal, SIGXFSZ) << r.describe() << r.output;
  EXPECT_NE(r.describe().find("wrote a file larger than the limit (1 MiB)"), std::string::npos) << r.describe();
  EXPECT_LE(fs::file_size(big), 1u << 20);
}

TEST_P(Sandbox, CpuTimeLimitStopsASpinner) {
  spec.cpu_seconds = 1;
  const ProcessResult r = helper("spin");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, SIGXCPU) << r.describe() << r.output;
  EXPECT_NE(r.describe().find("used more than its CPU time limit"), std::string::npos) << r.describe();
}

TEST_P(Sandbox, KillingItsOwnGroupSparesTheGrader) {
  // Its own session and process group in every mode: the grader is not in it.
  const ProcessResult r = sh("kill -9 0");
  EXPECT_EQ(r.signal, SIGKILL) << r.describe();
}

TEST_P(Sandbox, TheChildCannotKillTheGrader) {
  if (!isolation_info(GetParam()).private_pids)
    GTEST_SKIP() << "without a pid namespace the child can signal the grader (kill -9 -1 not tried)";
  const ProcessResult r = sh("kill -9 $PPID; kill -9 -1; echo still here");
  // Still running this test is the assertion; the shell killed itself with -1 or survived.
  EXPECT_TRUE(r.ok() || r.signal == SIGKILL) << r.describe() << r.output;
}

TEST_P(Sandbox, PassedFdReachesTheParent) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);  // close-on-exec, as the grader's fds are: kept anyway
  spec.pass_fds = {fds[1]};
  const ProcessResult r = helper("write-fd", std::to_string(fds[1]));
  close(fds[1]);
  EXPECT_TRUE(r.ok()) << r.describe() << r.output;
  EXPECT_EQ(read_all(fds[0]), "through the passed fd\n");
  close(fds[0]);
}

TEST_P(Sandbox, OtherFdsAreClosed) {
  const int low = open("/dev/null", O_RDONLY);
  const int fd = fcntl(low, F_DUPFD, 50);  // not close-on-exec, not passed, out of the shells' way
  close(low);
  ASSERT_GE(fd, 50);
  const ProcessResult r = sh("test -e /proc/self/fd/" + std::to_string(fd) + " && echo open || echo closed");
  close(fd);
  EXPECT_EQ(r.output, "closed\n");
}

// The runner's record goes through a pipe the grader drains (record_channel.hpp): the sandbox's
// file size limit stops the code under test from filling the disk, not the record of a large
// output; the record has its own cap, beyond which the rest is dropped without blocking the runner.
TEST_P(Sandbox, RecordPassesTheFileSizeLimitUpToItsOwnCap) {
  const std::string dir = fs::temp_directory_path() / ("gpulab-record-" + std::to_string(getpid()));
  fs::create_directories(dir);
  spec.file_size_bytes = std::size_t{1} << 20;
  {
    RecordChannel record(dir + "/record.bin");
    spec.pass_fds = {record.write_end()};
    const ProcessResult r = helper("write-fd-mib", std::to_string(record.write_end()) + ":8");
    record.finish();
    EXPECT_TRUE(r.ok()) << r.describe() << r.output;
    EXPECT_EQ(fs::file_size(dir + "/record.bin"), std::uintmax_t{8} << 20);
  }
  {
    RecordChannel record(dir + "/capped.bin", std::size_t{3} << 20);
    spec.pass_fds = {record.write_end()};
    const ProcessResult r = helper("write-fd-mib", std::to_string(record.write_end()) + ":8");
    record.finish();
    EXPECT_TRUE(r.ok()) << r.describe() << r.output;
    EXPECT_EQ(fs::file_size(dir + "/capped.bin"), std::uintmax_t{3} << 20);
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Modes, Sandbox,
                         ::testing::Values(Isolation::bubblewrap, Isolation::unshare, Isolation::rlimits),
                         [](const ::testing::TestParamInfo<Isolation>& i) { return to_string(i.param); });

TEST(SandboxProbe, BestIsAvailableAndDescribed) {
  const Isolation best = best_isolation();
  EXPECT_TRUE(isolation_info(best).available);
  EXPECT_FALSE(isolation_info(best).description.empty());
  EXPECT_TRUE(isolation_info(Isolation::rlimits).available);
  std::printf("best isolation here: %s\n", isolation_info(best).description.c_str());
}

// run_process (trusted commands): the same draining and clean-up, the grader's environment.
TEST(RunProcess, TimesOutAndLeavesNothingBehind) {
  const std::string t = token();
  // A detached shell in a new session (its $0, hence its command line, holds the token) and a
  // parent that outlives the time limit.
  const ProcessResult r =
      run_process({"sh", "-c", "(setsid sh -c 'sleep 1000; :' " + t + " &); sleep 1000; :", t}, {}, 1);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(processes_with(t), 0);
}

TEST(RunProcess, ConcurrentRunsDoNotStopEachOther) {
  // Each run ends by stopping the new children of the grader: not those of a run in another thread.
  // Short runs in a thread, each started before the slow one or during it, ending during it.
  bool short_ok = true;
  std::thread t([&] {
    for (int i = 0; i < 5; ++i) short_ok = run_process({"sleep", "0.2"}, {}, 20).ok() && short_ok;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const ProcessResult slow = run_process({"sh", "-c", "sleep 1; echo slow"}, {}, 20);
  t.join();
  EXPECT_TRUE(short_ok);
  EXPECT_TRUE(slow.ok()) << slow.describe();
  EXPECT_EQ(slow.output, "slow\n");
}

TEST(RunProcess, InheritsTheEnvironmentPlusExtras) {
  setenv("GPULAB_PARENT_VAR", "inherited", 1);
  const ProcessResult r = run_process({"sh", "-c", "echo $GPULAB_PARENT_VAR $GPULAB_EXTRA; exit 5"},
                                      {{"GPULAB_EXTRA", "extra"}}, 10);
  unsetenv("GPULAB_PARENT_VAR");
  EXPECT_EQ(r.output, "inherited extra\n");
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(r.describe(), "exited with status 5");
}

TEST(RunProcess, MissingProgramIsReported) {
  const ProcessResult r = run_process({"gpulab-no-such-program"}, {}, 10);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.output.find("cannot run gpulab-no-such-program"), std::string::npos) << r.output;
}

TEST(Describe, NamesTheLimitThatWasHit) {
  ProcessResult r;
  r.signal = SIGABRT;
  r.memory_limit_bytes = 512u << 20;
  r.output = "terminate called after throwing an instance of 'std::bad_alloc'\n";
  EXPECT_NE(r.describe().find("it ran out of its memory limit (512 MiB)"), std::string::npos);
  r.memory_limit_bytes = 0;  // no limit: the program's own problem, not ours to explain
  EXPECT_EQ(r.describe().find("memory limit"), std::string::npos);
  r = {};
  r.timed_out = true;
  EXPECT_EQ(r.describe(), "did not finish within the time limit and was stopped");
}

}  // namespace
