// The runner's record: written to the grader's pipe, read back by the judge.
#include "kit_record.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <set>
#include <vector>

#include "gpulab/grade/defences.hpp"
#include "gpulab/grade/kit.hpp"

namespace gpulab::grade::kit {
namespace {

int g_fd = -1;
bool g_judging = false;
std::string g_runner_status;
std::string g_check;
int g_seq = 0;
std::string g_last_begun;                    // the last check the runner started
std::set<std::string> g_begun;               // every check the runner started
std::map<std::pair<std::string, int>, nlohmann::json> g_events;
std::vector<std::pair<std::string, std::string>> g_info;
std::set<std::string> g_said;                // rules already reported in the running check

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

}  // namespace

bool judging() { return g_judging; }

namespace record {

void open_channel(int fd) { g_fd = fd; }

bool load(const std::string& path, const std::string& runner_status, std::string& error) {
  g_judging = true;
  g_runner_status = runner_status;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read the record " + path;
    return false;
  }
  for (;;) {
    std::uint64_t size = 0;
    if (!in.read(reinterpret_cast<char*>(&size), sizeof size)) break;
    if (size > (std::uint64_t{1} << 34)) {
      error = "the record is malformed (an event of " + std::to_string(size) + " bytes)";
      return false;
    }
    std::vector<std::uint8_t> bytes(size);
    if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) break;  // cut short
    nlohmann::json e = nlohmann::json::from_cbor(bytes, true, false);
    if (e.is_discarded() || !e.is_object() || !e.contains("type")) {
      error = "the record is malformed";
      return false;
    }
    const std::string type = e["type"].get<std::string>();
    if (type == "begin") {
      g_last_begun = e.value("check", "");
      g_begun.insert(g_last_begun);
    } else if (type == "info") {
      g_info.emplace_back(e.value("key", ""), e.value("value", ""));
    } else {
      std::pair<std::string, int> key{e.value("check", ""), e.value("seq", -1)};
      if (g_events.count(key) && defence_enabled("record")) {
        // The kit sends one event per step: a second one was written by something else.
        error = "the record holds two events for step " + std::to_string(key.second) + " of " + key.first +
                ": something other than the grader's kit wrote to it (tampering)";
        return false;
      }
      g_events[key] = std::move(e);
    }
  }
  return true;
}

void begin_check(const std::string& name) {
  g_check = name;
  g_seq = 0;
  g_said.clear();
  if (!g_judging) send({{"type", "begin"}, {"check", name}});
}

int next_seq() { return g_seq++; }

const std::string& current_check() { return g_check; }

bool first_time(const std::string& key) { return g_said.insert(key).second; }

void send(nlohmann::json event) {
  if (g_judging || g_fd < 0) return;
  if (event["type"] != "begin" && event["type"] != "info") event["check"] = g_check;
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(event);
  const std::uint64_t size = bytes.size();
  write_all(g_fd, &size, sizeof size);
  write_all(g_fd, bytes.data(), bytes.size());
}

const nlohmann::json* replay(const std::string& type, const std::string& name) {
  const int seq = g_seq - 1;  // the caller took its number already
  const auto it = g_events.find({g_check, seq});
  if (it == g_events.end()) {
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
  if (it->second.value("type", "") != type || it->second.value("name", it->second.value("what", "")) != name) {
    ADD_FAILURE() << "the lab process's record does not match this check: expected " << type << " '" << name
                  << "', found " << it->second.value("type", "?") << " '"
                  << it->second.value("name", it->second.value("what", "?")) << "'";
    return nullptr;
  }
  return &it->second;
}

const std::vector<std::pair<std::string, std::string>>& runner_info() { return g_info; }

}  // namespace record
}  // namespace gpulab::grade::kit
