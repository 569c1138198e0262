#include <einrel_AtomicFile.hpp>
#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>
#include <einrel_Hdf5Transfer.hpp>
#include <einrel_ParallelHdf5.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace einrel::io {
namespace {

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

// This rank's boxes as move_boxes takes them.
template <class HostBoxes>
std::vector<detail::BoxMemory> memory_of(const HostBoxes& boxes) {
  std::vector<detail::BoxMemory> memory;
  for (const auto& b : boxes) memory.push_back({&b.box, const_cast<void*>(static_cast<const void*>(b.data))});
  return memory;
}

std::string reading_failure(const DatasetSource& source) {
  return "input file '" + source.file + "': reading dataset '" + detail::display_name(source.dataset) + "' failed";
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
  std::optional<detail::Transfer> transfer;  // chosen at the first collective read
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
  if (!open_->transfer) open_->transfer = detail::choose_transfer(comm_);
  const hid_t dataset = open_->datasets.at({source.file, source.dataset}).get();
  comm::agree_on_failure(comm_, detail::move_boxes(dataset, dtype, detail::Direction::read, *open_->transfer,
                                                   memory_of(boxes), reading_failure(source)));
}

void InputFiles::read_local(const DatasetSource& source, Dtype dtype, const std::vector<HostBox>& boxes) {
  const auto known = open_->datasets.find({source.file, source.dataset});
  if (known == open_->datasets.end())
    throw Error("input file '" + source.file + "': dataset '" + detail::display_name(source.dataset) +
                "' is read before it was opened");
  if (const auto failed = detail::move_boxes(known->second.get(), dtype, detail::Direction::read,
                                             detail::Transfer::independent, memory_of(boxes), reading_failure(source)))
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
    const detail::Transfer transfer = detail::choose_transfer(comm);
    for (const DatasetBoxes& d : datasets) {
      const std::string failure = "writing dataset '" + d.name + "' to '" + path + "' failed";
      std::optional<Handle> dataset;
      const bool zero = std::find(zero_filled.begin(), zero_filled.end(), d.name) != zero_filled.end();
      collectively(comm, [&] {
        dataset.emplace(create_dataset(file->get(), d.name, detail::native_type(d.dtype), d.bound, zero, failure));
      });
      comm::agree_on_failure(comm, detail::move_boxes(dataset->get(), d.dtype, detail::Direction::write, transfer,
                                                      memory_of(d.boxes), failure));
    }
    for (const DatasetMask& m : masks) {
      const std::string failure = "writing dataset '" + m.name + "' to '" + path + "' failed";
      std::optional<Handle> dataset;
      collectively(comm, [&] {
        dataset.emplace(create_dataset(file->get(), m.name, H5T_NATIVE_UCHAR, m.dims, false, failure));
      });
      std::optional<std::string> failed;
      const Handle dxpl = detail::transfer_properties(detail::Transfer::independent);
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
