#ifndef EINREL_TESTTEMPDIR_HPP
#define EINREL_TESTTEMPDIR_HPP

#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace einrel::test {

// A fresh directory shared by all ranks of `comm` (named after rank 0's pid), removed at scope exit.
class TempDir {
 public:
  explicit TempDir(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
    int pid = static_cast<int>(::getpid()), rank = 0;
    MPI_Comm_rank(comm_, &rank);
    MPI_Bcast(&pid, 1, MPI_INT, 0, comm_);
    path_ = std::filesystem::temp_directory_path() / ("einrel-test-" + std::to_string(pid));
    if (rank == 0) std::filesystem::create_directories(path_);
    MPI_Barrier(comm_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    int rank = 0;
    MPI_Barrier(comm_);
    MPI_Comm_rank(comm_, &rank);
    if (rank == 0) std::filesystem::remove_all(path_);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Number of entries in the directory (to check that nothing stray was left).
  std::size_t count() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(path_)) ++n;
    return n;
  }

 private:
  MPI_Comm comm_;
  std::filesystem::path path_;
};

}  // namespace einrel::test

#endif
