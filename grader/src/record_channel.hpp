// record_channel.hpp - where the lab runner's record goes: a pipe the grader drains into a file.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/grade/record_mac.hpp"

namespace gpulab::grade {

/// The key of one run's record (gpulab/grade/record_mac.hpp): fresh random bytes, given to the
/// runner through a pipe of its own (runner_fd(), passed to the runner, which reads it once
/// before any check runs and closes it) and to the judge as hex (hex()). The pipe's write end is
/// closed once the key is in it: nothing else can be read there, nor written.
class RecordKey {
 public:
  RecordKey() {
    for (std::size_t got = 0; got < key_.size();) {
      const ssize_t n = ::getrandom(key_.data() + got, key_.size() - got, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("cannot draw a random key for the record");
      got += static_cast<std::size_t>(n);
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot create a pipe for the record's key");
    const bool written = ::write(fds[1], key_.data(), key_.size()) == static_cast<ssize_t>(key_.size());
    ::close(fds[1]);
    read_ = fds[0];
    if (!written) throw std::runtime_error("cannot write the record's key");
  }
  ~RecordKey() { close_runner_end(); }
  RecordKey(const RecordKey&) = delete;
  RecordKey& operator=(const RecordKey&) = delete;

  int runner_fd() const { return read_; }
  /// Once the runner has started (it holds its own copy of the descriptor).
  void close_runner_end() {
    if (read_ >= 0) ::close(read_);
    read_ = -1;
  }
  std::string hex() const { return record_mac::to_hex(key_); }

 private:
  record_mac::Key key_{};
  int read_ = -1;
};

/// The runner's record goes through a pipe, drained into `path` by a thread of the grader: the
/// file size limit of the sandbox (student code may not fill the disk) does not cap the record,
/// which holds every output of every call (a 16384 x 16384 transpose's timed output is 1 GiB).
/// The record itself is capped (kMaxBytes): beyond it the rest is dropped, the record ends
/// mid-message and the judge reports it as incomplete.
class RecordChannel {
 public:
  static constexpr std::size_t kMaxBytes = std::size_t{24} << 30;

  explicit RecordChannel(const std::string& path, std::size_t max_bytes = kMaxBytes) : max_bytes_(max_bytes) {
    file_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file_ < 0) throw std::runtime_error("cannot create " + path);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      ::close(file_);
      throw std::runtime_error("cannot create a pipe for " + path);
    }
    read_ = fds[0];
    write_ = fds[1];
    drain_ = std::thread([this] { drain(); });
  }
  ~RecordChannel() { finish(); }
  RecordChannel(const RecordChannel&) = delete;
  RecordChannel& operator=(const RecordChannel&) = delete;

  int write_end() const { return write_; }

  /// After the runner has ended (its whole process tree is gone): the parent's write end is
  /// closed, the rest of the pipe drained, the file closed.
  void finish() {
    if (write_ >= 0) ::close(write_);
    write_ = -1;
    stop_ = true;
    if (drain_.joinable()) drain_.join();
    if (read_ >= 0) ::close(read_);
    if (file_ >= 0) ::close(file_);
    read_ = file_ = -1;
  }

 private:
  void drain() {
    std::vector<char> buf(std::size_t{1} << 20);
    std::size_t total = 0;
    int quiet_after_stop = 0;
    bool write_failed = false;
    for (;;) {
      pollfd p{read_, POLLIN, 0};
      const int r = ::poll(&p, 1, 100);
      if (r < 0 && errno != EINTR) return;
      if (r <= 0) {
        // A descendant that escaped the kill could hold the write end forever: two seconds of
        // silence after the runner ended is the end.
        if (stop_ && ++quiet_after_stop > 20) return;
        continue;
      }
      const ssize_t n = ::read(read_, buf.data(), buf.size());
      if (n == 0) return;  // every write end closed
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return;
      }
      quiet_after_stop = 0;
      std::size_t keep = std::min<std::size_t>(static_cast<std::size_t>(n), max_bytes_ - std::min(total, max_bytes_));
      total += static_cast<std::size_t>(n);
      // After a failed write (disk full) the pipe is still drained, so that the runner never
      // blocks on it; the record ends there and the judge says it is incomplete.
      for (const char* q = buf.data(); keep > 0 && !write_failed;) {
        const ssize_t w = ::write(file_, q, keep);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) write_failed = true;
        else {
          q += w;
          keep -= static_cast<std::size_t>(w);
        }
      }
    }
  }

  std::size_t max_bytes_;
  int file_ = -1, read_ = -1, write_ = -1;
  std::atomic<bool> stop_{false};
  std::thread drain_;
};

}  // namespace gpulab::grade
