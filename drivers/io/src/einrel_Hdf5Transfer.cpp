#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>
#include <einrel_Hdf5Transfer.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace einrel::io::detail {
namespace {

// This rank's wish: true for collective. Throws on a value it does not know.
bool asked_collective() {
  const char* text = std::getenv("EINREL_HDF5_TRANSFER");
  if (!text || !*text || std::strcmp(text, "independent") == 0) return false;
  if (std::strcmp(text, "collective") == 0) return true;
  throw Error(std::string("EINREL_HDF5_TRANSFER='") + text + "': expected independent or collective");
}

herr_t move(hid_t dataset, Dtype dtype, Direction direction, hid_t mem, hid_t file_space, hid_t dxpl, void* data) {
  return direction == Direction::read ? H5Dread(dataset, native_type(dtype), mem, file_space, dxpl, data)
                                      : H5Dwrite(dataset, native_type(dtype), mem, file_space, dxpl, data);
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

std::optional<std::string> move_independently(hid_t dataset, Dtype dtype, Direction direction,
                                              const std::vector<BoxMemory>& boxes, const std::string& failure) {
  const Handle dxpl = transfer_properties(Transfer::independent);
  for (const BoxMemory& b : boxes) {
    const Handle file_space = file_selection(dataset, *b.box);
    const hsize_t n = static_cast<hsize_t>(b.box->size());
    const Handle mem_space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    if (!file_space.ok() || !mem_space.ok() ||
        move(dataset, dtype, direction, mem_space.get(), file_space.get(), dxpl.get(), b.data) < 0)
      return with_reason(failure);  // before the spaces close, which clears HDF5's error stack
  }
  return std::nullopt;
}

// A run of a box's elements that is contiguous both in the file and in the box's memory.
struct Run {
  std::uint64_t file_offset;  // in elements, from the dataset's start
  std::size_t box;
  std::uint64_t box_offset, length;
};

// The runs of every box, in file order: along the dimensions a box covers whole, from the last on, its rows
// join into one run, so a box of whole rows is one run.
std::vector<Run> runs_in_file_order(const std::vector<BoxMemory>& boxes, const std::vector<hsize_t>& dims) {
  const std::size_t rank = dims.size();
  std::vector<std::uint64_t> stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * dims[d];
  std::vector<Run> runs;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const Box& box = *boxes[i].box;
    if (rank == 0) {
      runs.push_back({0, i, 0, 1});
      continue;
    }
    const std::vector<Extent> ext = box.extents();
    std::size_t first = rank - 1;  // the run spans dimensions first..rank-1
    while (first > 0 && static_cast<hsize_t>(ext[first]) == dims[first]) --first;
    std::uint64_t length = 1, count = 1;
    for (std::size_t d = first; d < rank; ++d) length *= static_cast<std::uint64_t>(ext[d]);
    for (std::size_t d = 0; d < first; ++d) count *= static_cast<std::uint64_t>(ext[d]);
    std::vector<Extent> at(first, 0);  // the run's place among the box's runs
    for (std::uint64_t r = 0; r < count; ++r) {
      std::uint64_t offset = 0;
      for (std::size_t d = 0; d < rank; ++d)
        offset += static_cast<std::uint64_t>(box.lo[d] + (d < first ? at[d] : 0)) * stride[d];
      runs.push_back({offset, i, r * length, length});
      for (std::size_t d = first; d-- > 0;) {
        if (++at[d] < ext[d]) break;
        at[d] = 0;
      }
    }
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.file_offset < b.file_offset; });
  return runs;
}

// The runs lie end to end in `buffer` (write: from the boxes into it; read: from it into the boxes).
void copy_runs(const std::vector<Run>& runs, const std::vector<BoxMemory>& boxes, std::size_t bytes,
               unsigned char* buffer, Direction direction) {
  std::size_t at = 0;
  for (const Run& r : runs) {
    unsigned char* box = static_cast<unsigned char*>(boxes[r.box].data) + r.box_offset * bytes;
    unsigned char* staged = buffer + at;
    const std::size_t n = r.length * bytes;
    if (direction == Direction::write)
      std::memcpy(staged, box, n);
    else
      std::memcpy(box, staged, n);
    at += n;
  }
}

// This rank's boxes as one selection of the dataset's space, or nothing where they overlap (the selection
// then holds fewer elements than the boxes).
std::optional<Handle> union_selection(hid_t dataset, const std::vector<BoxMemory>& boxes, hsize_t elements) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  if (!space.ok() || H5Sselect_none(space.get()) < 0) throw Error("");
  for (const BoxMemory& b : boxes) {
    if (b.box->lo.empty()) {
      if (H5Sselect_all(space.get()) < 0) throw Error("");
      continue;
    }
    const std::vector<hsize_t> start(b.box->lo.begin(), b.box->lo.end());
    std::vector<hsize_t> count;
    for (Extent e : b.box->extents()) count.push_back(static_cast<hsize_t>(e));
    if (H5Sselect_hyperslab(space.get(), H5S_SELECT_OR, start.data(), nullptr, count.data(), nullptr) < 0)
      throw Error("");
  }
  const hssize_t selected = H5Sget_select_npoints(space.get());
  if (selected < 0) throw Error("");
  if (static_cast<hsize_t>(selected) != elements) return std::nullopt;
  return space;
}

}  // namespace

Handle transfer_properties(Transfer transfer) {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  const H5FD_mpio_xfer_t mode = transfer == Transfer::collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT;
  if (!dxpl.ok() || H5Pset_dxpl_mpio(dxpl.get(), mode) < 0) throw Error("cannot set up HDF5 transfers through MPI-IO");
  return dxpl;
}

Transfer choose_transfer(const comm::Communicator& comm) {
  int mine = 0;
  comm::collectively(comm, [&] { mine = asked_collective() ? 1 : 0; });
  // Ranks that disagree end up independent, never in different calls.
  int all = 0;
  comm::check_mpi(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm.get()), "MPI_Allreduce");
  return all == 1 ? Transfer::collective : Transfer::independent;
}

std::optional<std::string> move_boxes(hid_t dataset, Dtype dtype, Direction direction, Transfer transfer,
                                      const std::vector<BoxMemory>& boxes, const std::string& failure) {
  std::vector<BoxMemory> nonempty;
  for (const BoxMemory& b : boxes)
    if (b.box->lo.empty() || b.box->size() > 0) nonempty.push_back(b);
  if (transfer == Transfer::independent) return move_independently(dataset, dtype, direction, nonempty, failure);

  const std::size_t bytes = dtype_bytes(dtype);
  hsize_t elements = 0;
  for (const BoxMemory& b : nonempty) elements += b.box->lo.empty() ? 1 : static_cast<hsize_t>(b.box->size());
  std::optional<std::string> failed;
  std::optional<Handle> file_space;
  std::vector<Run> runs;
  std::unique_ptr<unsigned char[]> buffer;  // not zeroed: every byte is written before it is read
  void* memory = nullptr;  // what HDF5 moves: one box's own memory (C order is its file order), else `buffer`
  bool overlapping = false;
  try {
    file_space = union_selection(dataset, nonempty, elements);
    overlapping = !file_space;
    if (file_space && nonempty.size() == 1) {
      memory = nonempty.front().data;
    } else if (file_space) {
      const Handle whole(H5Dget_space(dataset), H5Sclose);
      const int rank = whole.ok() ? H5Sget_simple_extent_ndims(whole.get()) : -1;
      if (rank < 0) throw Error("");
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      if (rank > 0) H5Sget_simple_extent_dims(whole.get(), dims.data(), nullptr);
      runs = runs_in_file_order(nonempty, dims);
      buffer.reset(new unsigned char[std::max<std::size_t>(elements * bytes, bytes)]);
      if (direction == Direction::write) copy_runs(runs, nonempty, bytes, buffer.get(), direction);
      memory = buffer.get();
    }
  } catch (const std::bad_alloc&) {
    failed = failure + ": out of memory for a buffer of " + std::to_string(elements * bytes) + " bytes";
  } catch (const Error&) {
    failed = with_reason(failure);
  }
  // Every rank makes the one collective call; one with nothing to move selects nothing.
  const bool selecting = !failed && !overlapping && elements > 0;
  Handle none_space;
  if (!selecting) {
    none_space = Handle(H5Dget_space(dataset), H5Sclose);
    if (none_space.ok()) H5Sselect_none(none_space.get());
    buffer.reset(new unsigned char[bytes]);
    memory = buffer.get();
  }
  const hsize_t count = selecting ? elements : 1;
  const Handle mem_space(H5Screate_simple(1, &count, nullptr), H5Sclose);
  if (!selecting && mem_space.ok()) H5Sselect_none(mem_space.get());
  const Handle dxpl = transfer_properties(Transfer::collective);
  const hid_t file_selected = selecting ? file_space->get() : none_space.get();
  if (move(dataset, dtype, direction, mem_space.get(), file_selected, dxpl.get(), memory) < 0 && !failed)
    failed = with_reason(failure);
  if (failed) return failed;
  if (overlapping) return move_independently(dataset, dtype, direction, nonempty, failure);
  if (selecting && buffer && direction == Direction::read) copy_runs(runs, nonempty, bytes, buffer.get(), direction);
  return std::nullopt;
}

}  // namespace einrel::io::detail
