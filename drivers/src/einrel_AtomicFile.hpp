#ifndef EINREL_ATOMICFILE_HPP
#define EINREL_ATOMICFILE_HPP

#include <string>

namespace einrel::io {

// Writes a file all-or-nothing: the content goes to a temporary file next to `path`, commit() renames it
// onto `path`, and destruction without commit() removes it. Nothing appears at `path` on failure.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  const std::string& temporary_path() const { return temporary_; }
  // Writes `text` as the whole content of the temporary file; throws Error when that fails.
  void write_text(const std::string& text);
  // Renames the temporary file onto the final path; throws Error if that fails.
  void commit();

 private:
  std::string path_, temporary_;
  bool committed_ = false;
};

}  // namespace einrel::io

#endif
