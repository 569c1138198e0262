#include <einrel_AtomicFile.hpp>
#include <einrel_Error.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

namespace einrel::io {
namespace {

// The temporary paths a signal handler removes: fixed storage, since a handler may not allocate. A slot is
// claimed by its `used` flag and its path written before `live` is set.
constexpr std::size_t slots = 16, max_path = 4096;
struct Slot {
  std::atomic<bool> used{false}, live{false};
  char path[max_path];
};
std::array<Slot, slots> registry;

int register_path(const std::string& path) {
  if (path.size() >= max_path) return -1;
  for (std::size_t i = 0; i < slots; ++i) {
    bool expected = false;
    if (!registry[i].used.compare_exchange_strong(expected, true)) continue;
    std::memcpy(registry[i].path, path.c_str(), path.size() + 1);
    registry[i].live.store(true);
    return static_cast<int>(i);
  }
  return -1;  // more live files than slots: this one is not removed on a signal
}

void unregister_path(int slot) {
  if (slot < 0) return;
  registry[static_cast<std::size_t>(slot)].live.store(false);
  registry[static_cast<std::size_t>(slot)].used.store(false);
}

// The socket of MPICH's launcher (hydra's PMI-1 connection, PMI_FD), or -1; set by install_signal_cleanup
// (getenv may not be called in a handler).
std::atomic<int> launcher_fd{-1};

// Tells the launcher that the job failed with status 128 + signal, as MPI_Abort would (PMI-1's
// "cmd=abort exitcode=N"), by one write, which a handler may call. Without it hydra 4.0 may report a job
// whose ranks all died of a signal it forwarded as having exited with status 0: it ends every rank as soon
// as one rank's PMI connection closes and counts the exit statuses it had no time to collect as 0.
void tell_launcher(int signal_number) {
  const int fd = launcher_fd.load();
  struct stat st {};
  // Still a socket: after MPI_Finalize closed it, the number may name a file.
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return;
  char line[] = "cmd=abort exitcode=000\n";
  int code = 128 + signal_number;
  for (int i = 21; i >= 19; --i, code /= 10) line[i] = static_cast<char>('0' + code % 10);
  [[maybe_unused]] const ssize_t written = ::write(fd, line, sizeof line - 1);
}

extern "C" void remove_temporaries_and_die(int signal_number) {
  for (Slot& s : registry)
    if (s.live.load()) ::unlink(s.path);
  tell_launcher(signal_number);
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  std::string host(name);
  for (char& c : host)
    if (c == '-' || c == '/') c = '_';  // the name is split at its last '-'
  return host;
}

constexpr const char* marker = ".einrel-tmp-";

// Removes PATH.einrel-tmp-HOST-PID files left by processes of this host that are gone.
void remove_stale(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + marker + host_name() + "-";
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    char* stop = nullptr;
    const long pid = std::strtol(pid_text.c_str(), &stop, 10);
    if (pid_text.empty() || *stop != '\0' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

}  // namespace

RemoveOnSignal::RemoveOnSignal(const std::string& path) : slot_(register_path(path)) {}

RemoveOnSignal::~RemoveOnSignal() { unregister_path(slot_); }

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)),
      temporary_(path_ + marker + host_name() + "-" + std::to_string(::getpid())),
      on_signal_(temporary_) {
  remove_stale(path_);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
  }
}

void AtomicFile::commit() {
  if (const char* pause = std::getenv("EINREL_TEST_PAUSE_BEFORE_COMMIT"); pause && *pause)
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(pause)));
  if (reserved_) {  // the disk reserved past the file's end, which the file keeps until truncated
    const int fd = ::open(temporary_.c_str(), O_WRONLY);
    struct stat st {};
    const bool freed = fd >= 0 && ::fstat(fd, &st) == 0 && ::ftruncate(fd, st.st_size) == 0;
    const int error = errno;
    if (fd >= 0) ::close(fd);
    if (!freed) throw Error("cannot create '" + path_ + "': " + std::strerror(error));
  }
  std::error_code ec;
  std::filesystem::rename(temporary_, path_, ec);
  if (ec) throw Error("cannot create '" + path_ + "': " + ec.message());
  committed_ = true;
}

namespace {

// Writes `text` to `path` anew; the OS's reason (strerror) where that fails, else nothing.
std::optional<std::string> write_whole(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) return std::strerror(errno);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return std::strerror(error);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return std::strerror(errno);  // NFS and full disks may tell only now
  return std::nullopt;
}

}  // namespace

void AtomicFile::create_temporary() {
  if (const auto reason = write_whole(temporary_, ""))
    throw Error("cannot create output file '" + path_ + "': " + *reason);
}

void AtomicFile::reserve(std::uintmax_t bytes) {
  const std::string failure = "cannot write output file '" + path_ + "' (" + std::to_string(bytes) + " bytes)";
  int error = ENOTSUP;
#ifdef FALLOC_FL_KEEP_SIZE
  const int fd = ::open(temporary_.c_str(), O_WRONLY);
  if (fd < 0) throw Error(failure + ": " + std::strerror(errno));
  int rc;
  do rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(bytes));
  while (rc != 0 && errno == EINTR);
  error = rc == 0 ? 0 : errno;
  ::close(fd);
#endif
  reserved_ = error == 0;
  if (error == 0) return;
  if (error != EOPNOTSUPP && error != ENOTSUP && error != ENOSYS && error != EINVAL)
    throw Error(failure + ": " + std::strerror(error));
  // A file system that cannot reserve: at least the space must be free now.
  const std::filesystem::path parent = std::filesystem::path(temporary_).parent_path();
  struct statvfs fs {};
  if (::statvfs(parent.empty() ? "." : parent.c_str(), &fs) == 0 &&
      static_cast<std::uintmax_t>(fs.f_bavail) * fs.f_frsize < bytes)
    throw Error(failure + ": " + std::strerror(ENOSPC));
}

void AtomicFile::write_text(const std::string& text) {
  if (const auto reason = write_whole(temporary_, text)) throw Error("cannot write '" + path_ + "': " + *reason);
}

void install_signal_cleanup() {
  if (const char* fd = std::getenv("PMI_FD"); fd && std::getenv("PMI_RANK")) launcher_fd.store(std::atoi(fd));
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_die;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &action, nullptr);
}

}  // namespace einrel::io
