#ifndef EINREL_ATOMICFILE_HPP
#define EINREL_ATOMICFILE_HPP

#include <cstdint>
#include <string>

namespace einrel::io {

// Writes a file all-or-nothing: the content goes to a temporary file next to `path`, commit() renames it
// onto `path`, and destruction without commit() removes it. Nothing appears at `path` on failure.
//
// The temporary name carries the writing job's identity: `PATH.einrel-tmp-HOST-PID` (the host and process
// of the rank that owns the file). A run killed outright (SIGKILL) leaves it behind; the constructor removes
// such files for the same PATH whose process is gone from this host (and keeps those of live processes or
// other hosts). SIGINT, SIGTERM and SIGHUP remove the temporary files of the process before it dies
// (install_signal_cleanup). The test-only variable EINREL_TEST_PAUSE_BEFORE_COMMIT=SECONDS sleeps before
// the rename, so that tests can signal a run while its temporary file exists.
// While it lives, `path` is removed by the signal handlers of install_signal_cleanup. The ranks that write
// into a file another rank owns hold one for it, so that whichever rank a signal reaches first removes it.
class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(const std::string& path);
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;
  ~RemoveOnSignal();

 private:
  int slot_;  // in the registry the handlers walk; -1 when it was full
};

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  const std::string& temporary_path() const { return temporary_; }
  // Creates the temporary file empty; throws Error with the OS's reason (a missing directory, no permission, a
  // full disk) when it cannot.
  void create_temporary();
  // Reserves `bytes` of disk for the temporary file (created) without changing its size (Linux fallocate,
  // FALLOC_FL_KEEP_SIZE), so that writes within them cannot fail for want of space; where the file system
  // cannot reserve, checks that as many bytes are free now (statvfs). Throws Error with the OS's reason ("No
  // space left on device") when they are not there.
  void reserve(std::uintmax_t bytes);
  // Writes `text` as the whole content of the temporary file; throws Error with the OS's reason when that fails.
  void write_text(const std::string& text);
  // Renames the temporary file onto the final path (first freeing what reserve() kept past its end); throws Error
  // if that fails.
  void commit();

 private:
  std::string path_, temporary_;
  RemoveOnSignal on_signal_;
  bool committed_ = false;
  bool reserved_ = false;
};

// Installs handlers for SIGINT, SIGTERM and SIGHUP that unlink every temporary file of a live AtomicFile or
// RemoveOnSignal in this process, then end it by the same signal (the default action), so that the exit
// status still says which signal ended it. Under MPICH's launcher (PMI_FD set) a handler first tells the
// launcher that the job failed with status 128 + signal, as MPI_Abort would, so that mpiexec's own status is
// never 0 (einrel_AtomicFile.cpp says why). Idempotent.
void install_signal_cleanup();

}  // namespace einrel::io

#endif
