// The lab process: runs a lab's GoogleTest checks and reports each one to the grader.
#include "gpulab/grade/harness.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>

#include "gpulab/grade/kit.hpp"
#include "gpulab/grade/protocol.hpp"
#include "gpulab/host.hpp"
#include "kit_record.hpp"

namespace gpulab::grade {
namespace {

Options g_options;
Rubric g_rubric;

struct CheckState {
  std::string name;
  bool has_value = false;
  double value = 0, threshold = 0;
  std::string unit;
  std::vector<std::string> notes;
  std::string not_measured;
  bool rule_broken = false;
};
CheckState g_check;

std::FILE* g_report = nullptr;

void emit(const std::vector<std::string>& fields) {
  if (!g_report) return;
  const std::string line = protocol::join(fields);
  std::fwrite(line.data(), 1, line.size(), g_report);
  std::fflush(g_report);
}

std::string check_name(const ::testing::TestInfo& t) {
  return std::string(t.test_suite_name()) + "." + t.name();
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// Writes the protocol lines (see gpulab/grade/protocol.hpp) as the checks run.
class Reporter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestProgramStart(const ::testing::UnitTest& unit) override {
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
      const auto* suite = unit.GetTestSuite(i);
      for (int j = 0; j < suite->total_test_count(); ++j) {
        const auto* t = suite->GetTestInfo(j);
        if (t->should_run()) emit({"plan", check_name(*t), t->test_suite_name()});
      }
    }
  }
  void OnTestStart(const ::testing::TestInfo& t) override {
    g_check = CheckState{};
    g_check.name = check_name(t);
    failures_.clear();
    kit::record::begin_check(g_check.name);
    emit({"begin", g_check.name});
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::string m = r.message();
    if (m.rfind("Failed\n", 0) == 0) m.erase(0, 7);  // ADD_FAILURE's prefix says nothing
    failures_.push_back(m);
  }
  void OnTestEnd(const ::testing::TestInfo& t) override {
    const bool measured = g_check.not_measured.empty();
    bool passed = t.result()->Passed() && measured;
    if (passed)
      if (std::string extra = kit::record::steps_not_asked_for(); !extra.empty()) {
        failures_.push_back(std::move(extra));
        passed = false;
      }
    if (!kit::record::tampered().empty()) {
      // Nothing in the record is the runner's: no value, no note, only why.
      emit({"check", g_check.name, t.test_suite_name(), "0", "", "", "",
            "the record was tampered with: " + kit::record::tampered() +
                "\n  the whole lab fails: the grader cannot tell what the code under test did"});
      return;
    }
    std::string message;
    if (!measured) message = "not measured: " + g_check.not_measured;
    if (!passed && measured && g_check.has_value && g_check.rule_broken)
      message = "failed on a rule every lab shares, which the value (" + g_check.unit +
                ") does not count: the call named below";
    for (const auto& f : failures_) message += (message.empty() ? "" : "\n") + f;
    for (const auto& n : g_check.notes) message += (message.empty() ? "" : "\n") + n;
    emit({"check", g_check.name, t.test_suite_name(), passed ? "1" : "0",
          g_check.has_value ? number(g_check.value) : "", g_check.has_value ? number(g_check.threshold) : "",
          g_check.unit, message});
  }

 private:
  std::vector<std::string> failures_;
};

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// Every check of this lab process, in the order they run (the record's order).
std::vector<std::string> all_checks() {
  std::vector<std::string> names;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i)
    for (int j = 0; j < unit.GetTestSuite(i)->total_test_count(); ++j)
      names.push_back(check_name(*unit.GetTestSuite(i)->GetTestInfo(j)));
  return names;
}

[[noreturn]] void usage(const char* why) {
  std::cerr << "lab process: " << why
            << "\nusage: <lab> --rubric FILE [--seed N] [--impl NAME] [--no-performance]\n"
               "         [--channel FD [--record-key-fd FD]]     runner: record what the code under test does\n"
               "         [--replay FILE --report FILE [--runner-status TEXT] [--gpu-findings FILE]\n"
               "          [--kernel-resources FILE] [--record-key HEX]]  judge: replay and decide\n"
               "       (with neither: run and judge in this process, for a quick look)\n";
  std::exit(2);
}

}  // namespace

const Options& options() { return g_options; }
const Rubric& rubric() { return g_rubric; }

std::string backend_section(const std::string& kind) { return kind + "." + gpulab::backend(); }

const std::string& current_check() { return g_check.name; }

std::mt19937_64 rng() { return std::mt19937_64(g_options.seed ^ fnv1a(g_check.name)); }

void record(double value, double threshold, const std::string& unit) {
  g_check.has_value = true;
  g_check.value = value;
  g_check.threshold = threshold;
  g_check.unit = unit;
}
void record_sum(double value, double threshold, const std::string& unit) {
  const bool same = g_check.has_value && g_check.unit == unit;
  record(same ? g_check.value + value : value, threshold, unit);
}
void record_max(double value, double threshold, const std::string& unit) {
  const bool same = g_check.has_value && g_check.unit == unit;
  record(same ? std::max(g_check.value, value) : value, threshold, unit);
}
void note(const std::string& text) { g_check.notes.push_back(text); }
void info(const std::string& key, const std::string& value) { emit({"info", key, value}); }
void not_measured(const std::string& why) { g_check.not_measured = why; }
void rule_broken() { g_check.rule_broken = true; }
void emit_metric(const std::vector<std::string>& fields) {
  std::vector<std::string> line{"metric", g_check.name};
  line.insert(line.end(), fields.begin(), fields.end());
  emit(line);
}

void suggest_threshold(const std::string& key, double measured, double factor) {
  info("suggest." + backend_section("performance") + "." + key, number(measured * factor) + "\t" + number(measured));
}

Measured::Measured(double value, double threshold, std::string unit)
    : value_(value), threshold_(threshold), unit_(std::move(unit)) {}

Measured& Measured::suggest(std::string key, double factor) {
  suggest_key_ = std::move(key);
  factor_ = factor;
  return *this;
}

Measured& Measured::at_most() {
  at_most_ = true;
  return *this;
}

Measured& Measured::fails_if(bool failed) {
  failed_ = failed_ || failed;
  return *this;
}

bool Measured::judge(const std::string& text, const std::string& failure) const {
  record(value_, threshold_, unit_);
  if (!suggest_key_.empty()) suggest_threshold(suggest_key_, value_, factor_);
  const bool passed = !failed_ && (at_most_ ? !(value_ > threshold_) : !(value_ < threshold_));
  if (passed) note(text);
  else ADD_FAILURE() << text << failure;
  return passed;
}

}  // namespace gpulab::grade

namespace gpulab::grade {
namespace {

/// Has glibc take large blocks from the heap and keep freed memory there (a no-op with another C library).
void keep_freed_memory() {
#if defined(__GLIBC__)
  // Checks allocate, fill and free host vectors of up to a GiB (2^28 floats) several times each.
  // glibc maps every block that large with mmap and unmaps it when freed, so each new one pays the
  // kernel's first touch of every page again (3.4 s per GiB on a 2-core VM like CI's, more than
  // filling it). Taking them from the heap and keeping freed memory there reuses the pages: a
  // 2^28-float input then takes 0.24 s to allocate and fill instead of 3.5 s.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);  // -1: never give the heap's top back
#endif
}

/// Reads the lab process's own arguments (GoogleTest's taken out) into g_options.
void parse_arguments(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--rubric") g_options.rubric_path = value();
    else if (a == "--report") g_options.report_path = value();
    else if (a == "--seed") g_options.seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--impl") g_options.impl = value();
    else if (a == "--no-performance") g_options.performance = false;
    else if (a == "--channel") g_options.channel_fd = std::atoi(value().c_str());
    else if (a == "--record-key-fd") g_options.record_key_fd = std::atoi(value().c_str());
    else if (a == "--record-key") g_options.record_key = value();
    else if (a == "--replay") g_options.replay_path = value();
    else if (a == "--runner-status") g_options.runner_status = value();
    else if (a == "--gpu-findings") g_options.gpu_findings_path = value();
    else if (a == "--kernel-resources") g_options.kernel_resources_path = value();
    else usage(("unknown argument " + a).c_str());
  }
}

/// Loads the rubric, leaves out the performance checks where asked, and opens the report.
void apply_options() {
  if (g_options.rubric_path.empty()) usage("--rubric is required");
  try {
    g_rubric = Rubric::load(g_options.rubric_path);
  } catch (const std::exception& e) {
    usage(e.what());
  }
  if (!g_options.performance) {
    std::string filter = ::testing::GTEST_FLAG(filter);
    ::testing::GTEST_FLAG(filter) = filter + (filter.find('-') == std::string::npos ? "-" : ":") + "performance.*";
  }
  if (!g_options.report_path.empty()) {
    g_report = std::fopen(g_options.report_path.c_str(), "a");
    if (!g_report) usage(("cannot write " + g_options.report_path).c_str());
  }
}

/// The judge's side: loads the runner's record to replay, and reports what the runner said of itself.
void load_record() {
  // The judge: never runs the code under test; the device is the runner's.
  std::string error;
  std::optional<record_mac::Key> key;
  if (!g_options.record_key.empty() && !record_mac::from_hex(g_options.record_key, key.emplace()))
    usage("--record-key takes 32 hexadecimal digits");
  if (!kit::record::load(g_options.replay_path, g_options.runner_status.empty() ? "stopped" : g_options.runner_status,
                         key, all_checks(), error))
    usage(error.c_str());
  if (!kit::record::tampered().empty()) info("record_tampered", kit::record::tampered());
  for (const auto& [key, value] : kit::record::runner_info()) info(key, value);
}

/// The runner's side: opens the record's channel and reports the device, in the report and in the record.
void open_record() {
  kit::record::open_channel(g_options.channel_fd, g_options.record_key_fd);
  auto runner_info = [](const std::string& key, const std::string& value) {
    info(key, value);
    kit::record::send({{"type", "info"}, {"key", key}, {"value", value}});
  };
  try {
    const gpulab::DeviceInfo d = gpulab::device_info();
    runner_info("device", d.name);
    runner_info("driver", d.driver);
    runner_info("warp_size", std::to_string(d.warp_size));
    if (d.clock_khz) runner_info("sm_clock_mhz", std::to_string(d.clock_khz / 1000));
    if (d.memory_clock_khz) runner_info("memory_clock_mhz", std::to_string(d.memory_clock_khz / 1000));
  } catch (const std::exception& e) {
    runner_info("device_error", e.what());
  }
}

}  // namespace
}  // namespace gpulab::grade

int main(int argc, char** argv) {
  using namespace gpulab::grade;
  keep_freed_memory();
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::GTEST_FLAG(shuffle) = false;  // the record's events follow the checks' own order
  g_options.seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  parse_arguments(argc, argv);
  apply_options();
  ::testing::UnitTest::GetInstance()->listeners().Append(new Reporter);
  if (::testing::GTEST_FLAG(list_tests)) {
    // Listing the checks (the grader's plan): nothing to measure.
  } else if (!g_options.replay_path.empty()) {
    load_record();
  } else {
    open_record();
  }
  info("seed", std::to_string(g_options.seed));
  if (g_options.replay_path.empty()) std::printf("seed %llu\n", static_cast<unsigned long long>(g_options.seed));
  return RUN_ALL_TESTS();
}
