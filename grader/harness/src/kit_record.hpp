// The record a runner sends and a judge replays (see gpulab/grade/kit.hpp): one CBOR-encoded
// JSON object per event, each preceded by its length, on a pipe the grader owns.
//   {"type": "begin", "check": C}                                  a check starts
//   {"type": "call", "check": C, "seq": k, "what": ..., "error": ..., "outputs": [bytes...],
//    "inputs_hash": [...], "evidence": {...}, "findings": [...], "metrics": [...]}
//   {"type": "timing" | "value" | "floats", "check": C, "seq": k, "name": ..., ...}
//   {"type": "info", "key": K, "value": V}                         device, driver, warp size
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>

namespace gpulab::grade::kit::record {

/// Runner: events go to this file descriptor (-1: nowhere, the standalone mode).
void open_channel(int fd);
/// Judge: loads the runner's record. `runner_status` says how the runner ended ("exited with
/// status 0", "was killed by signal 11 (Segmentation fault)", ...), for the checks it lacks.
bool load(const std::string& path, const std::string& runner_status, std::string& error);

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
