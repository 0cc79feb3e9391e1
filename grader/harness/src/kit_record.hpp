// The record a runner sends and a judge replays (see gpulab/grade/kit.hpp): one CBOR-encoded
// JSON object per event, each preceded by its length and followed by its tag
// (gpulab/grade/record_mac.hpp), on a pipe the grader owns. In the order sent: the info events,
// then for each check its begin event and its steps, numbered from 0.
//   {"type": "begin", "check": C}                                  a check starts
//   {"type": "call", "check": C, "seq": k, "what": ..., "error": ..., "outputs": [bytes...],
//    "inputs_hash": [...], "evidence": {...}, "findings": [...], "metrics": [...]}
//   {"type": "timing" | "value" | "floats", "check": C, "seq": k, "name": ..., ...}
//   {"type": "info", "key": K, "value": V}                         device, driver, warp size
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/grade/record_mac.hpp"

namespace gpulab::grade::kit::record {

/// Runner: events go to file descriptor `fd` (-1: nowhere, the standalone mode), tagged with the
/// key read from `key_fd` (16 bytes, then closed: before any check runs, so that the code under
/// test finds nothing left to read there). Without a key the tags are zero, and no judge
/// accepts them.
void open_channel(int fd, int key_fd);
/// Judge: loads the runner's record. `runner_status` says how the runner ended ("exited with
/// status 0", "was killed by signal 11 (Segmentation fault)", ...), for the checks it lacks.
/// With `key`, each event's tag must be right (defence record-mac); the events must come in
/// the order the kit sends them, their checks in the order of `checks` (the judge's, all of
/// them), each once (defence record). A record that breaks either rule is tampered with
/// (tampered() says how): every check fails. False, with `error`, when it cannot be read.
bool load(const std::string& path, const std::string& runner_status, const std::optional<record_mac::Key>& key,
          const std::vector<std::string>& checks, std::string& error);
/// Judge: why the record is not the kit's own, or empty.
const std::string& tampered();
/// Judge, when a passing check ends: why it fails after all if the record holds steps of it that
/// the check did not take (a runner that took steps its judge did not ran other checks), or empty.
std::string steps_not_asked_for();

/// Called by the harness when a check starts (resets the sequence number).
void begin_check(const std::string& name);
/// The check now running (its name).
const std::string& current_check();
/// Runner: sends an event (adds check and seq). Judge: ignored.
void send(nlohmann::json event);
/// Judge: the event the runner sent at this point of the running check, or nullptr (the
/// failure is reported, naming how the runner ended). Runner: never called.
const nlohmann::json* replay(const std::string& type, const std::string& name);
/// True the first time `key` is asked within the running check: a rule broken by every call
/// of a check is said once, with the first call's details.
bool first_time(const std::string& key);
/// The next sequence number of the running check (both modes advance it identically).
int next_seq();
/// Judge: the runner's "info" events, in order.
const std::vector<std::pair<std::string, std::string>>& runner_info();

}  // namespace gpulab::grade::kit::record
