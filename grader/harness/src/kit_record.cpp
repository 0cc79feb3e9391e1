// The runner's record: written to the grader's pipe, read back by the judge.
#include "kit_record.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <set>
#include <vector>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/kit.hpp"

namespace gpulab::grade::kit {
namespace {

// Runner.
int g_fd = -1;
record_mac::Key g_key{};
std::uint64_t g_sent = 0, g_last_tag = 0;

// Judge.
bool g_judging = false;
std::string g_runner_status;
std::string g_tampered;
std::string g_last_begun;                    // the last check the runner started
std::set<std::string> g_begun;               // every check the runner started
std::map<std::string, std::map<int, nlohmann::json>> g_steps;  // each check's steps by number
std::map<std::string, std::size_t> g_asked;  // how many steps of each check the judge asked for
std::vector<std::pair<std::string, std::string>> g_info;

// Both.
std::string g_check;
int g_seq = 0;
std::set<std::string> g_said;  // rules already reported in the running check

void write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the grader went away: nothing to report to
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

bool read_all(int fd, void* data, std::size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

std::string event_name(const nlohmann::json& e) {
  const std::string type = e.value("type", "?");
  if (type == "begin" || type == "info") return "a " + type + " event";
  return "step " + std::to_string(e.value("seq", -1)) + " of " + e.value("check", std::string("?")) + " (" + type + ")";
}

/// The judge's order rule (defence record), one event at a time: info events first, then each
/// check begun once, in the judge's order, followed by its steps 0, 1, 2 ... Empty when `e`
/// may come next, else why not.
class Order {
 public:
  explicit Order(const std::vector<std::string>& checks) : checks_(checks) {}
  std::string next(const nlohmann::json& e) {
    const std::string type = e.value("type", "");
    if (type == "info") return check_.empty() ? "" : "an info event after the checks began";
    if (type == "begin") {
      const std::string check = e.value("check", "");
      const auto it = std::find(checks_.begin() + static_cast<long>(position_), checks_.end(), check);
      if (it == checks_.end())
        return std::find(checks_.begin(), checks_.end(), check) == checks_.end()
                   ? "a check the judge does not have (" + check + ") began"
                   : check + " began again, or out of the order the checks run in";
      position_ = static_cast<std::size_t>(it - checks_.begin()) + 1;
      check_ = check;
      seq_ = 0;
      return "";
    }
    if (check_.empty() || e.value("check", "") != check_ || e.value("seq", -1) != seq_)
      return event_name(e) + " where step " + std::to_string(seq_) + " of " + (check_.empty() ? "no check" : check_) +
             " was due";
    ++seq_;
    return "";
  }

 private:
  const std::vector<std::string>& checks_;
  std::size_t position_ = 0;
  std::string check_;
  int seq_ = 0;
};

/// Keeps an event the order rule let through.
void keep(nlohmann::json&& e) {
  const std::string type = e.value("type", "");
  if (type == "begin") {
    g_last_begun = e.value("check", "");
    g_begun.insert(g_last_begun);
  } else if (type == "info") {
    g_info.emplace_back(e.value("key", ""), e.value("value", ""));
  } else {
    // Without the order rule, the last of two events for a step is the one kept (what the
    // defence is switched off to show).
    const std::string check = e.value("check", "");
    const int seq = e.value("seq", -1);
    g_steps[check][seq] = std::move(e);
  }
}

}  // namespace

bool judging() { return g_judging; }

namespace record {

void open_channel(int fd, int key_fd) {
  g_fd = fd;
  if (key_fd < 0) return;
  if (!read_all(key_fd, g_key.data(), g_key.size())) g_key = {};
  ::close(key_fd);
}

bool load(const std::string& path, const std::string& runner_status, const std::optional<record_mac::Key>& key,
          const std::vector<std::string>& checks, std::string& error) {
  g_judging = true;
  g_runner_status = runner_status;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read the record " + path;
    return false;
  }
  const bool check_tags = key && defence_enabled("record-mac");
  const bool check_order = defence_enabled("record");
  Order order(checks);
  std::uint64_t previous = 0;
  for (std::uint64_t index = 0;; ++index) {
    std::uint64_t size = 0, tag = 0;
    if (!in.read(reinterpret_cast<char*>(&size), sizeof size)) break;
    if (size > (std::uint64_t{1} << 34)) {
      g_tampered = "event " + std::to_string(index) + " claims " + std::to_string(size) + " bytes";
      break;
    }
    std::vector<std::uint8_t> bytes(size);
    // Cut short (the runner was stopped while writing): the record ends there.
    if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)) ||
        !in.read(reinterpret_cast<char*>(&tag), sizeof tag))
      break;
    if (check_tags && tag != record_mac::event_tag(*key, index, previous, bytes.data(), bytes.size())) {
      g_tampered = "event " + std::to_string(index) + " does not carry the tag of this run's key: something other" +
                   " than the grader's kit wrote to the record";
      break;
    }
    previous = tag;
    nlohmann::json e = nlohmann::json::from_cbor(bytes, true, false);
    if (e.is_discarded() || !e.is_object() || !e.contains("type") || !e["type"].is_string()) {
      g_tampered = "event " + std::to_string(index) + " is malformed";
      break;
    }
    if (const std::string why = check_order ? order.next(e) : ""; !why.empty()) {
      g_tampered = "event " + std::to_string(index) + " is " + why + ": the kit sends each step once, in order";
      break;
    }
    keep(std::move(e));
  }
  return true;
}

const std::string& tampered() { return g_tampered; }

void begin_check(const std::string& name) {
  g_check = name;
  g_seq = 0;
  g_said.clear();
  g_asked[name] = 0;
  if (!g_judging) send({{"type", "begin"}, {"check", name}});
}

std::string steps_not_asked_for() {
  if (!g_judging || !g_tampered.empty() || !defence_enabled("record")) return {};
  const auto it = g_steps.find(g_check);
  const std::size_t held = it == g_steps.end() ? 0 : it->second.size();
  if (held <= g_asked[g_check]) return {};
  return "the lab process recorded " + std::to_string(held) + " steps of this check where the check took " +
         std::to_string(g_asked[g_check]) + ": the record does not follow the grader's plan (tampering)";
}

int next_seq() { return g_seq++; }

const std::string& current_check() { return g_check; }

bool first_time(const std::string& key) { return g_said.insert(key).second; }

void send(nlohmann::json event) {
  if (g_judging || g_fd < 0) return;
  if (event["type"] != "begin" && event["type"] != "info") event["check"] = g_check;
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(event);
  const std::uint64_t size = bytes.size();
  const std::uint64_t tag = record_mac::event_tag(g_key, g_sent++, g_last_tag, bytes.data(), bytes.size());
  g_last_tag = tag;
  write_all(g_fd, &size, sizeof size);
  write_all(g_fd, bytes.data(), bytes.size());
  write_all(g_fd, &tag, sizeof tag);
}

const nlohmann::json* replay(const std::string& type, const std::string& name) {
  const int seq = g_seq - 1;  // the caller took its number already
  if (!g_tampered.empty()) {
    if (first_time("tampered")) ADD_FAILURE() << "the record was tampered with: " << g_tampered;
    return nullptr;
  }
  g_asked[g_check] = std::max<std::size_t>(g_asked[g_check], static_cast<std::size_t>(seq) + 1);
  const auto it = g_steps.find(g_check);
  const auto step = it == g_steps.end() ? std::map<int, nlohmann::json>::const_iterator{} : it->second.find(seq);
  if (it == g_steps.end() || step == it->second.end()) {
    if (!first_time("missing record")) return nullptr;
    std::string why;
    if (!g_begun.count(g_check))
      why = "not run: the lab process " + g_runner_status + " before it started this check";
    else if (g_check == g_last_begun)
      why = "the lab process " + g_runner_status + " while running this check (during " + name + ")";
    else
      why = "the lab process stopped before it finished " + name + " (" + g_runner_status + ")";
    ADD_FAILURE() << why;
    return nullptr;
  }
  const nlohmann::json& e = step->second;
  if (e.value("type", "") != type || e.value("name", e.value("what", "")) != name) {
    ADD_FAILURE() << "the lab process's record does not match this check: expected " << type << " '" << name
                  << "', found " << e.value("type", "?") << " '" << e.value("name", e.value("what", "?")) << "'";
    return nullptr;
  }
  return &e;
}

const std::vector<std::pair<std::string, std::string>>& runner_info() { return g_info; }

}  // namespace record
}  // namespace gpulab::grade::kit
