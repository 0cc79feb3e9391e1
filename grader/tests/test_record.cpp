// The runner's record and its defences (grader/harness/src/kit_record.cpp): the tags' hash against
// the specification's test vectors, and lab 01's reference run as a runner, its record judged
// as it came, replayed as another run's (another key: a complete forged record), edited and cut.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/grade/record_mac.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::grade::record_mac::Key;
using gpulab::grade::record_mac::SipHash;

Key counting_key() {
  Key k;
  for (int i = 0; i < 16; ++i) k[i] = static_cast<std::uint8_t>(i);
  return k;
}

TEST(GraderRecordMac, SipHashTestVectors) {
  // SipHash-2-4 with the key 00 01 .. 0f: the paper's Appendix A (15 bytes 00 .. 0e) and the first
  // two of the reference implementation's vectors (the empty message, and 00).
  std::vector<std::uint8_t> m(15);
  for (int i = 0; i < 15; ++i) m[i] = static_cast<std::uint8_t>(i);
  const std::pair<std::size_t, std::uint64_t> vectors[] = {
      {15, 0xa129ca6149be45e5ull}, {0, 0x726fdb47dd0e0e31ull}, {1, 0x74f839c593dc67fdull}};
  for (const auto& [n, expected] : vectors) {
    SipHash h(counting_key());
    h.update(m.data(), n);
    EXPECT_EQ(h.finish(), expected) << n << " bytes";
  }
  // The same message in pieces of every size.
  for (std::size_t piece = 1; piece <= 15; ++piece) {
    SipHash h(counting_key());
    for (std::size_t at = 0; at < 15; at += piece) h.update(m.data() + at, std::min(piece, 15 - at));
    EXPECT_EQ(h.finish(), 0xa129ca6149be45e5ull) << "pieces of " << piece;
  }
}

TEST(GraderRecordMac, HexRoundTrip) {
  Key k = counting_key(), back{};
  EXPECT_EQ(gpulab::grade::record_mac::to_hex(k), "000102030405060708090a0b0c0d0e0f");
  EXPECT_TRUE(gpulab::grade::record_mac::from_hex(gpulab::grade::record_mac::to_hex(k), back));
  EXPECT_EQ(back, k);
  EXPECT_FALSE(gpulab::grade::record_mac::from_hex("00", back));
  EXPECT_FALSE(gpulab::grade::record_mac::from_hex(std::string(32, 'g'), back));
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// lab 01's reference as a runner (a few checks, a fixed seed), its record in a directory of its
/// own; the judge (the same executable with --replay) on any record.
class GraderRecord : public ::testing::Test {
 protected:
  static constexpr const char* kChecks =
      "--gtest_filter=correctness.tiny_sizes:correctness.block_size_boundaries:performance.*";

  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpulab-record-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    key_ = random_key();
    std::ofstream(dir_ / "key.bin", std::ios::binary).write(reinterpret_cast<const char*>(key_.data()), 16);
    const std::string cmd = std::string(kLab) + " --rubric " + kRubric + " --seed 7 --impl solution --channel 3" +
                            " --record-key-fd 4 '" + kChecks + "' 3>'" + (dir_ / "record.bin").string() + "' 4<'" +
                            (dir_ / "key.bin").string() + "' >'" + (dir_ / "runner.log").string() + "' 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir_ / "runner.log");
    record_ = read_file(dir_ / "record.bin");
    ASSERT_GT(record_.size(), 1000u);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static Key random_key() {
    std::random_device rd;
    Key k;
    for (auto& b : k) b = static_cast<std::uint8_t>(rd());
    return k;
  }

  struct Verdict {
    std::string name;
    bool passed = false;
    std::string message;
  };
  /// The judge's verdicts on `record`, under `key`, with GPULAB_GRADER_DISABLE=`disabled`.
  std::vector<Verdict> judge(const std::string& record, const Key& key, const std::string& disabled = "") {
    const fs::path rec = dir_ / "judged.bin", report = dir_ / "verdicts.tsv";
    std::ofstream(rec, std::ios::binary) << record;
    fs::remove(report);
    const std::string cmd = (disabled.empty() ? "" : "GPULAB_GRADER_DISABLE=" + disabled + " ") + kLab + " --rubric " +
                            kRubric + " --seed 7 --impl solution --replay '" + rec.string() + "' --report '" +
                            report.string() + "' --record-key " + gpulab::grade::record_mac::to_hex(key) + " '" +
                            kChecks + "' >/dev/null 2>&1";
    (void)std::system(cmd.c_str());
    std::vector<Verdict> out;
    std::istringstream lines(read_file(report));
    for (std::string line; std::getline(lines, line);) {
      std::vector<std::string> f;
      std::istringstream fields(line);
      for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
      if (f.size() >= 7 && f[0] == "check") out.push_back({f[1], f[3] == "1", f.size() > 7 ? f[7] : ""});
    }
    return out;
  }
  static int passed(const std::vector<Verdict>& v) {
    int n = 0;
    for (const auto& c : v) n += c.passed;
    return n;
  }
  static bool all_say(const std::vector<Verdict>& v, const std::string& text) {
    for (const auto& c : v)
      if (c.passed || c.message.find(text) == std::string::npos) return false;
    return !v.empty();
  }

  /// The record's frames: [size][bytes][tag], as (offset, length) of each whole frame.
  static std::vector<std::pair<std::size_t, std::size_t>> frames(const std::string& r) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t at = 0; at + 8 <= r.size();) {
      std::uint64_t size = 0;
      std::memcpy(&size, r.data() + at, 8);
      out.emplace_back(at, 16 + size);
      at += 16 + size;
    }
    return out;
  }

  static constexpr const char* kLab = GPULAB_TEST_LAB01_JUDGE;
  static constexpr const char* kRubric = GPULAB_TEST_LAB01_RUBRIC;
  static inline fs::path dir_;
  static inline Key key_{};
  static inline std::string record_;
  /// How many checks the filter selects on this back-end (two correctness checks, and one or two
  /// performance checks: the emulator's metrics, or a GPU's timed ratio): the run's own record,
  /// judged as it came, has a verdict for each.
  std::size_t checks() {
    if (checks_ == 0) checks_ = judge(record_, key_).size();
    return checks_;
  }
  static inline std::size_t checks_ = 0;
};

TEST_F(GraderRecord, TheRunsOwnRecordPasses) {
  const auto v = judge(record_, key_);
  ASSERT_GE(v.size(), 3u);
  EXPECT_EQ(passed(v), static_cast<int>(v.size()));
}

TEST_F(GraderRecord, AnotherRunsRecordEarnsNothing) {
  // The reference's whole record, every event and the run's end, given as the record of a run with
  // another key: what a hand-in that wrote a complete record of its own would get.
  const auto v = judge(record_, random_key());
  ASSERT_EQ(v.size(), checks());
  EXPECT_TRUE(all_say(v, "the record was tampered with: event 0 does not carry the tag of this run's key"));
  // Without the defence the replayed record passes: it is the tags that stop it.
  EXPECT_EQ(passed(judge(record_, random_key(), "record-mac")), static_cast<int>(checks()));
}

TEST_F(GraderRecord, AnEditedEventIsTampering) {
  const auto f = frames(record_);
  ASSERT_GT(f.size(), 6u);
  std::string edited = record_;
  edited[f[5].first + 8 + (f[5].second - 16) / 2] ^= 1;  // one bit in the middle of an event's bytes
  EXPECT_TRUE(all_say(judge(edited, key_), "event 5 does not carry the tag"));
}

TEST_F(GraderRecord, EventsOutOfOrderOrRepeatedAreTampering) {
  const auto f = frames(record_);
  ASSERT_GT(f.size(), 8u);
  const auto frame = [&](std::size_t i) { return record_.substr(f[i].first, f[i].second); };
  // The last event again (a second answer for a step), and two steps swapped: without the tags
  // (switched off) the order rule sees both.
  const std::string repeated = record_ + frame(f.size() - 1);
  std::string swapped = record_.substr(0, f[6].first) + frame(7) + frame(6) + record_.substr(f[8].first);
  EXPECT_TRUE(all_say(judge(repeated, key_), "does not carry the tag"));
  EXPECT_TRUE(all_say(judge(repeated, key_, "record-mac"), "the kit sends each step once, in order"));
  EXPECT_TRUE(all_say(judge(swapped, key_, "record-mac"), "the kit sends each step once, in order"));
  // With both rules off, the repeated step is simply taken (the last answer wins).
  EXPECT_EQ(passed(judge(repeated, key_, "record-mac,record")), static_cast<int>(checks()));
}

TEST_F(GraderRecord, ARecordCutShortIsNoTampering) {
  // A runner stopped while writing (a time-out): the checks it finished keep their verdicts, the
  // rest fail as not run.
  const auto f = frames(record_);
  const std::string cut = record_.substr(0, f[f.size() / 2].first + f[f.size() / 2].second / 2);
  const auto v = judge(cut, key_);
  ASSERT_EQ(v.size(), checks());
  EXPECT_TRUE(v[0].passed) << v[0].message;
  EXPECT_FALSE(v.back().passed);
  for (const auto& c : v) EXPECT_EQ(c.message.find("tampered"), std::string::npos) << c.message;
}

}  // namespace
