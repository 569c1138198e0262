// Fuzz target: `einrel run`'s input path on a damaged HDF5 file. The input is the whole file; it is read
// through MPI-IO on one rank as the datasets A (f64, 6x5, rows split in two boxes) and B (f32, 4x3) of a
// graph, as einrel run --input would.
#include <einrel_Error.hpp>
#include <einrel_FuzzInput.hpp>
#include <einrel_ParallelHdf5.hpp>

#include <mpi.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

std::string scratch_file() {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/einrel-fuzz-hdf5-" + std::to_string(getpid()) + ".h5";
}

void read_inputs(const std::string& path) {
  einrel::io::InputFiles files{einrel::comm::Communicator(MPI_COMM_SELF)};
  std::vector<double> a(30);
  const einrel::Bound a_bound{6, 5};
  files.read({path, "/A"}, einrel::Dtype::f64, a_bound,
             {{einrel::Box{{0, 0}, {3, 5}}, a.data()}, {einrel::Box{{3, 0}, {6, 5}}, a.data() + 15}});
  std::vector<float> b(12);
  files.read({path, "/B"}, einrel::Dtype::f32, einrel::Bound{4, 3}, {{einrel::Box{{0, 0}, {4, 3}}, b.data()}});
}

}  // namespace

// A damaged size field makes HDF5 ask malloc for exabytes; it checks for NULL and fails the open, which is
// what einrel meets outside AddressSanitizer. ASan's default is to abort instead.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_file();
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    read_inputs(path);
  } catch (const einrel::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
