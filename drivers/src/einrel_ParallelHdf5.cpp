#include <einrel_AtomicFile.hpp>
#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>
#include <einrel_ParallelHdf5.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

namespace einrel::io {
namespace {

using detail::Handle;
using redistribute::check_mpi;
using redistribute::collectively;
using redistribute::Communicator;

// File access through MPI-IO on comm (HDF5 duplicates the communicator).
Handle mpio_file_access(const Communicator& comm) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_mpio(fapl.get(), comm.get(), MPI_INFO_NULL) < 0)
    throw Error("cannot set up MPI-IO file access for HDF5");
  return fapl;
}

Handle collective_transfer() {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  if (!dxpl.ok() || H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE) < 0)
    throw Error("cannot set up collective HDF5 transfers");
  return dxpl;
}

// The dataset's file space with `box` selected, or nothing when box is null. A 0-d dataset's box is its
// whole scalar space.
Handle file_selection(hid_t dataset, const Box* box) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  if (!space.ok()) return space;
  herr_t rc = 0;
  if (!box) {
    rc = H5Sselect_none(space.get());
  } else if (!box->lo.empty()) {
    const std::vector<hsize_t> start(box->lo.begin(), box->lo.end());
    std::vector<hsize_t> count;
    for (Extent e : box->extents()) count.push_back(static_cast<hsize_t>(e));
    rc = H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  }
  return rc < 0 ? Handle() : std::move(space);
}

// The C-order elements of `box` in memory (one dimension suffices: the file selection gives the shape),
// or nothing when box is null.
Handle memory_space(const Box* box) {
  const hsize_t n = box ? static_cast<hsize_t>(box->size()) : 1;
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (space.ok() && !box && H5Sselect_none(space.get()) < 0) return Handle();
  return space;
}

// Collective over comm: transfer(mem_space, file_space, i) for each of this rank's `count` boxes, in as
// many calls as the rank with the most boxes makes: collective HDF5 transfers need every rank in every
// call, so ranks with fewer boxes take part with empty selections (i = count). A failed call does not end
// the loop (the others would wait for this rank); the first failure is agreed on at the end.
void transfer_collectively(const Communicator& comm, hid_t dataset, const std::vector<const Box*>& boxes,
                           const std::function<herr_t(hid_t, hid_t, std::size_t)>& transfer,
                           const std::string& failure) {
  long long calls = static_cast<long long>(boxes.size());
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &calls, 1, MPI_LONG_LONG, MPI_MAX, comm.get()), "MPI_Allreduce");
  std::optional<std::string> failed;
  for (long long call = 0; call < calls; ++call) {
    const std::size_t i = static_cast<std::size_t>(call);
    const Box* box = i < boxes.size() ? boxes[i] : nullptr;
    const Handle file_space = file_selection(dataset, box);
    const Handle mem_space = memory_space(box);
    if (!file_space.ok() || !mem_space.ok() || transfer(mem_space.get(), file_space.get(), box ? i : boxes.size()) < 0)
      if (!failed) failed = failure;
  }
  redistribute::agree_on_failure(comm, failed);
}

// A non-null address for the empty transfers (HDF5 rejects a null buffer even with nothing selected).
double no_elements;

}  // namespace

std::pair<std::string, DatasetSource> parse_binding(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error("--bind '" + text + "': expected NAME=FILE.h5:/dataset");
  const std::string name = text.substr(0, eq), rest = text.substr(eq + 1);
  const std::size_t colon = rest.rfind(":/");
  if (colon == std::string::npos) return {name, DatasetSource{rest, "/" + name}};
  DatasetSource source{rest.substr(0, colon), rest.substr(colon + 1)};
  if (source.file.empty() || source.dataset.size() < 2 || source.dataset.back() == '/')
    throw Error("--bind '" + text + "': expected NAME=FILE.h5:/dataset");
  return {name, source};
}

void read_boxes(const Communicator& comm, const DatasetSource& source, Dtype dtype, const Bound& bound,
                const std::vector<HostBox>& boxes) {
  detail::silence_hdf5();
  const std::string where = "input file '" + source.file + "'";
  collectively(comm, [&] {
    if (!std::filesystem::exists(source.file)) throw Error(where + " does not exist");
  });
  std::optional<Handle> file, dataset;
  collectively(comm, [&] {
    const Handle fapl = mpio_file_access(comm);
    file.emplace(H5Fopen(source.file.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
    if (!file->ok()) throw Error(where + " is not a readable HDF5 file");
  });
  collectively(
      comm, [&] { dataset.emplace(detail::open_checked_dataset(file->get(), where, source.dataset, dtype, bound)); });
  std::vector<const Box*> selected;
  for (const HostBox& b : boxes) selected.push_back(&b.box);
  const Handle dxpl = collective_transfer();
  transfer_collectively(
      comm, dataset->get(), selected,
      [&](hid_t mem, hid_t file_space, std::size_t i) {
        void* data = i < boxes.size() ? boxes[i].data : &no_elements;
        return H5Dread(dataset->get(), detail::native_type(dtype), mem, file_space, dxpl.get(), data);
      },
      where + ": reading dataset '" + detail::display_name(source.dataset) + "' failed");
}

void write_boxes(const Communicator& comm, const std::string& path, const std::vector<DatasetBoxes>& datasets) {
  detail::silence_hdf5();
  // Rank 0 owns the temporary file's name and its fate; every rank writes into it.
  std::optional<AtomicFile> out;
  if (comm.rank() == 0) out.emplace(path);
  const std::string temporary = redistribute::broadcast_string(comm, out ? out->temporary_path() : "", 0);
  {
    std::optional<Handle> file;
    collectively(comm, [&] {
      const Handle fapl = mpio_file_access(comm);
      file.emplace(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
      if (!file->ok()) throw Error("cannot create output file '" + path + "'");
    });
    const Handle dxpl = collective_transfer();
    for (const DatasetBoxes& d : datasets) {
      const std::string failure = "writing dataset '" + d.name + "' to '" + path + "' failed";
      std::optional<Handle> dataset;
      collectively(comm, [&] {
        std::vector<hsize_t> dims(d.bound.begin(), d.bound.end());
        const Handle space(d.bound.empty() ? H5Screate(H5S_SCALAR)
                                           : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                           H5Sclose);
        dataset.emplace(H5Dcreate2(file->get(), d.name.c_str(), detail::native_type(d.dtype), space.get(), H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT),
                        H5Dclose);
        if (!space.ok() || !dataset->ok()) throw Error(failure);
      });
      std::vector<const Box*> selected;
      for (const ConstHostBox& b : d.boxes) selected.push_back(&b.box);
      transfer_collectively(
          comm, dataset->get(), selected,
          [&](hid_t mem, hid_t file_space, std::size_t i) {
            const void* data = i < d.boxes.size() ? d.boxes[i].data : &no_elements;
            return H5Dwrite(dataset->get(), detail::native_type(d.dtype), mem, file_space, dxpl.get(), data);
          },
          failure);
    }
    std::optional<std::string> failed;
    if (!file->close()) failed = "writing output file '" + path + "' failed";
    redistribute::agree_on_failure(comm, failed);
  }
  collectively(comm, [&] {
    if (out) out->commit();
  });
}

}  // namespace einrel::io
