// The one way the library opens a file to read it: read_file (whole files) and
// SafetensorsFile::open (memory-mapped checkpoints) share its checks and messages.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "nvfp4/error.hpp"

namespace nvfp4::detail {

// A read-only descriptor of a regular file, and the file's size when it was opened; closed with
// the object. Opened non-blocking, so that a FIFO is refused instead of waiting forever for a
// writer; a directory or any other file that is not a regular one is refused too. Every refusal
// is kIo (the contents were never seen) but that of an empty name, kInvalidArgument.
class InputFile {
 public:
  static Result<InputFile> open(const std::string& path);
  InputFile(InputFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)), size_(o.size_) {}
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  InputFile& operator=(InputFile&&) = delete;
  ~InputFile();
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  InputFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace nvfp4::detail
