#include <einrel_AtomicFile.hpp>
#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>
#include <einrel_ParallelHdf5.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace einrel::io {
namespace {

using comm::check_mpi;
using comm::collectively;
using comm::Communicator;
using detail::Handle;

// File access through MPI-IO on comm (HDF5 duplicates the communicator).
Handle mpio_file_access(const Communicator& comm) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_mpio(fapl.get(), comm.get(), MPI_INFO_NULL) < 0)
    throw Error("cannot set up MPI-IO file access for HDF5");
  return fapl;
}

// Raw data moves with independent MPI-IO transfers: each rank reads or writes only its own boxes, in as
// many calls as it has boxes. Collective transfers (H5FD_MPIO_COLLECTIVE, with empty selections on ranks
// with fewer boxes) hung intermittently here (HDF5 1.10.8, MPICH 4.0, ROMIO) once a file held a few dozen
// small datasets: ranks ended up in different MPI-IO collectives inside one H5Dread. Opening, creating
// and closing files and datasets stay collective, as parallel HDF5 requires.
Handle independent_transfer() {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  if (!dxpl.ok() || H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_INDEPENDENT) < 0)
    throw Error("cannot set up HDF5 transfers through MPI-IO");
  return dxpl;
}

// The dataset's file space with `box` selected (a 0-d dataset's box is its whole scalar space).
Handle file_selection(hid_t dataset, const Box& box) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  if (!space.ok() || box.lo.empty()) return space;
  const std::vector<hsize_t> start(box.lo.begin(), box.lo.end());
  std::vector<hsize_t> count;
  for (Extent e : box.extents()) count.push_back(static_cast<hsize_t>(e));
  if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0)
    return Handle();
  return space;
}

// Local: transfer(mem_space, file_space, i) for each of this rank's boxes (the memory holds box i's
// elements in C order; one dimension suffices, the file selection gives the shape), up to the first failure:
// nothing when all succeeded, else `failure` with its reason (detail::with_reason).
std::optional<std::string> transfer_local_boxes(hid_t dataset, const std::vector<const Box*>& boxes,
                                                const std::function<herr_t(hid_t, hid_t, std::size_t)>& transfer,
                                                const std::string& failure) {
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const Handle file_space = file_selection(dataset, *boxes[i]);
    const hsize_t n = static_cast<hsize_t>(boxes[i]->size());
    const Handle mem_space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    if (!file_space.ok() || !mem_space.ok() || transfer(mem_space.get(), file_space.get(), i) < 0)
      return detail::with_reason(failure);  // before the spaces close, which clears HDF5's error stack
  }
  return std::nullopt;
}

// Collective over comm: transfer_local_boxes, then agreement on the first failure, so that every rank throws
// `failure` (with its reason) when any transfer failed.
void transfer_boxes(const Communicator& comm, hid_t dataset, const std::vector<const Box*>& boxes,
                    const std::function<herr_t(hid_t, hid_t, std::size_t)>& transfer, const std::string& failure) {
  comm::agree_on_failure(comm, transfer_local_boxes(dataset, boxes, transfer, failure));
}

// The boxes' host memory read from `dataset` as `dtype`, through `dxpl`.
std::function<herr_t(hid_t, hid_t, std::size_t)> box_reader(hid_t dataset, Dtype dtype, hid_t dxpl,
                                                            const std::vector<HostBox>& boxes) {
  return [=, &boxes](hid_t mem, hid_t file_space, std::size_t i) {
    return H5Dread(dataset, detail::native_type(dtype), mem, file_space, dxpl, boxes[i].data);
  };
}

std::vector<const Box*> boxes_of(const std::vector<HostBox>& boxes) {
  std::vector<const Box*> selected;
  for (const HostBox& b : boxes) selected.push_back(&b.box);
  return selected;
}

}  // namespace

std::pair<std::string, DatasetSource> parse_binding(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error("input binding '" + text + "': expected NAME=FILE.h5:/dataset");
  const std::string name = text.substr(0, eq), rest = text.substr(eq + 1);
  const std::size_t colon = rest.rfind(":/");
  if (colon == std::string::npos) return {name, DatasetSource{rest, "/" + name}};
  DatasetSource source{rest.substr(0, colon), rest.substr(colon + 1)};
  if (source.file.empty() || source.dataset.size() < 2 || source.dataset.back() == '/')
    throw Error("input binding '" + text + "': expected NAME=FILE.h5:/dataset");
  return {name, source};
}

struct InputFiles::OpenFiles {
  std::map<std::string, Handle> by_path;
  // Declared after the files: closed before them.
  std::map<std::pair<std::string, std::string>, Handle> datasets;  // by (file, dataset)
};

InputFiles::InputFiles(Communicator comm) : comm_(std::move(comm)), open_(std::make_unique<OpenFiles>()) {
  detail::silence_hdf5();
}

InputFiles::~InputFiles() = default;

void InputFiles::open(const DatasetSource& source, Dtype dtype, const Bound& bound) {
  if (open_->datasets.count({source.file, source.dataset})) return;
  const std::string where = "input file '" + source.file + "'";
  auto known = open_->by_path.find(source.file);
  if (known == open_->by_path.end()) {
    // Asked on one rank (not a file-system query from every rank) and agreed before the collective open, so
    // that no rank enters it alone.
    collectively(comm_, [&] {
      if (comm_.rank() == 0 && !std::filesystem::exists(source.file)) throw Error(where + " does not exist");
    });
    Handle file;
    collectively(comm_, [&] {
      const Handle fapl = mpio_file_access(comm_);
      file = Handle(H5Fopen(source.file.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
      if (!file.ok()) throw Error(where + " is not a readable HDF5 file");
    });
    known = open_->by_path.emplace(source.file, std::move(file)).first;
  }
  std::optional<Handle> dataset;
  collectively(comm_, [&] {
    dataset.emplace(detail::open_checked_dataset(known->second.get(), where, source.dataset, dtype, bound));
  });
  open_->datasets.emplace(std::pair{source.file, source.dataset}, std::move(*dataset));
}

void InputFiles::read(const DatasetSource& source, Dtype dtype, const Bound& bound, const std::vector<HostBox>& boxes) {
  open(source, dtype, bound);
  const hid_t dataset = open_->datasets.at({source.file, source.dataset}).get();
  const Handle dxpl = independent_transfer();
  transfer_boxes(
      comm_, dataset, boxes_of(boxes), box_reader(dataset, dtype, dxpl.get(), boxes),
      "input file '" + source.file + "': reading dataset '" + detail::display_name(source.dataset) + "' failed");
}

void InputFiles::read_local(const DatasetSource& source, Dtype dtype, const std::vector<HostBox>& boxes) {
  const auto known = open_->datasets.find({source.file, source.dataset});
  if (known == open_->datasets.end())
    throw Error("input file '" + source.file + "': dataset '" + detail::display_name(source.dataset) +
                "' is read before it was opened");
  const Handle dxpl = independent_transfer();
  if (const auto failed = transfer_local_boxes(
          known->second.get(), boxes_of(boxes), box_reader(known->second.get(), dtype, dxpl.get(), boxes),
          "input file '" + source.file + "': reading dataset '" + detail::display_name(source.dataset) + "' failed"))
    throw Error(*failed);
}

namespace {

// The creation properties of an output dataset: HDF5's defaults, or with zero written at allocation.
Handle dataset_creation(bool zero_filled, hid_t type) {
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!dcpl.ok() || !zero_filled) return dcpl;
  const double zero[2] = {0, 0};  // as large as the largest element type
  if (H5Pset_fill_value(dcpl.get(), type, zero) < 0 || H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_ALLOC) < 0)
    return Handle();
  return dcpl;
}

// Collective: creates a dataset of `type` and shape `bound` (0-d: a scalar) in `file`; throws `failure`.
Handle create_dataset(hid_t file, const std::string& name, hid_t type, const Bound& bound, bool zero_filled,
                      const std::string& failure) {
  std::vector<hsize_t> dims(bound.begin(), bound.end());
  const Handle space(
      bound.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
      H5Sclose);
  const Handle dcpl = dataset_creation(zero_filled, type);
  if (!space.ok() || !dcpl.ok()) throw Error(failure);
  Handle dataset(H5Dcreate2(file, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (!dataset.ok()) throw Error(detail::with_reason(failure));
  return dataset;
}

// The bytes of a file holding `datasets` and `masks` contiguously, with room for HDF5's metadata: what
// write_boxes reserves.
std::uintmax_t file_bytes(const std::vector<DatasetBoxes>& datasets, const std::vector<DatasetMask>& masks) {
  std::uintmax_t bytes = 16 * 1024 + 4 * 1024 * (datasets.size() + masks.size());
  for (const DatasetBoxes& d : datasets)
    bytes += static_cast<std::uintmax_t>(num_elements(d.bound)) * dtype_bytes(d.dtype);
  for (const DatasetMask& m : masks) bytes += static_cast<std::uintmax_t>(num_elements(m.dims));
  return bytes;
}

}  // namespace

void write_boxes(const Communicator& comm, const std::string& path, const std::vector<DatasetBoxes>& datasets,
                 const std::vector<std::string>& zero_filled, const std::vector<DatasetMask>& masks) {
  detail::silence_hdf5();
  // Rank 0 owns the temporary file's name and its fate; every rank writes into it.
  std::optional<AtomicFile> out;
  if (comm.rank() == 0) out.emplace(path);
  const std::string temporary = comm::broadcast_string(comm, out ? out->temporary_path() : "", 0);
  std::optional<RemoveOnSignal> on_signal;  // whichever rank a signal reaches first removes the file
  if (!out) on_signal.emplace(temporary);
  // The OS's reason where the file cannot be made (HDF5's own error says only that it could not), and its space
  // reserved before HDF5 writes: a disk that fills during HDF5's collective close fails it on some ranks only,
  // which then leave the others waiting in its barriers (HDF5 1.10, MPI-IO).
  collectively(comm, [&] {
    if (!out) return;
    out->create_temporary();
    out->reserve(file_bytes(datasets, masks));
  });
  {
    std::optional<Handle> file;
    collectively(comm, [&] {
      const Handle fapl = mpio_file_access(comm);
      file.emplace(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
      if (!file->ok()) throw Error(detail::with_reason("cannot create output file '" + path + "'"));
    });
    const Handle dxpl = independent_transfer();
    for (const DatasetBoxes& d : datasets) {
      const std::string failure = "writing dataset '" + d.name + "' to '" + path + "' failed";
      std::optional<Handle> dataset;
      const bool zero = std::find(zero_filled.begin(), zero_filled.end(), d.name) != zero_filled.end();
      collectively(comm, [&] {
        dataset.emplace(create_dataset(file->get(), d.name, detail::native_type(d.dtype), d.bound, zero, failure));
      });
      std::vector<const Box*> selected;
      for (const ConstHostBox& b : d.boxes) selected.push_back(&b.box);
      transfer_boxes(
          comm, dataset->get(), selected,
          [&](hid_t mem, hid_t file_space, std::size_t i) {
            return H5Dwrite(dataset->get(), detail::native_type(d.dtype), mem, file_space, dxpl.get(), d.boxes[i].data);
          },
          failure);
    }
    for (const DatasetMask& m : masks) {
      const std::string failure = "writing dataset '" + m.name + "' to '" + path + "' failed";
      std::optional<Handle> dataset;
      collectively(comm, [&] {
        dataset.emplace(create_dataset(file->get(), m.name, H5T_NATIVE_UCHAR, m.dims, false, failure));
      });
      std::optional<std::string> failed;
      if (comm.rank() == 0 &&
          H5Dwrite(dataset->get(), H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, dxpl.get(), m.values.data()) < 0)
        failed = detail::with_reason(failure);
      comm::agree_on_failure(comm, failed);
    }
    std::optional<std::string> failed;
    if (!file->close()) failed = detail::with_reason("writing output file '" + path + "' failed");
    comm::agree_on_failure(comm, failed);
  }
  collectively(comm, [&] {
    if (out) out->commit();
  });
}

}  // namespace einrel::io
