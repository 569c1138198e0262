#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>
#include <einrel_Hdf5Shapes.hpp>

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace einrel::io {

std::string mask_dataset(const std::string& dataset) { return dataset + ".mask"; }
std::string norms_dataset(const std::string& dataset) { return dataset + ".norms"; }

namespace {

// A dataset value as a message shows it: integers without a fraction, NaN and infinities by name.
std::string format_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// The parts per dimension of a shape dataset, checked against the tensor's bound.
std::vector<Extent> shape_parts(hid_t dataset, const std::string& where, const std::string& name, const Bound& bound) {
  const detail::Handle space(H5Dget_space(dataset), H5Sclose);
  const int rank = space.ok() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank != static_cast<int>(bound.size()))
    throw Error(where + ": dataset '" + name + "' has " + std::to_string(rank) + " dimension(s), the tensor " +
                std::to_string(bound.size()) + ": a shape has one entry per block of the tensor's grid");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  std::vector<Extent> parts(dims.begin(), dims.end());
  for (int d = 0; d < rank; ++d)
    if (parts[d] < 1 || parts[d] > bound[d])
      throw Error(where + ": dataset '" + name + "' cuts dimension " + std::to_string(d) + " of extent " +
                  std::to_string(bound[d]) + " into " + std::to_string(parts[d]) + " blocks");
  return parts;
}

// Reads a whole dataset of n numbers into `values` as doubles: any integer or float type, and enumerations over
// integers (h5py stores numpy's bool so) through their base type. False when HDF5 cannot.
bool read_as_doubles(hid_t dataset, std::vector<double>& values) {
  const detail::Handle file_type(H5Dget_type(dataset), H5Tclose);
  if (!file_type.ok()) return false;
  if (H5Tget_class(file_type.get()) != H5T_ENUM)
    return H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0;
  const detail::Handle memory_type(H5Tget_native_type(file_type.get(), H5T_DIR_ASCEND), H5Tclose);
  const detail::Handle base(memory_type.ok() ? H5Tget_super(memory_type.get()) : -1, H5Tclose);
  if (!base.ok()) return false;
  // The enumeration's values are its base integers in memory; converted in place to doubles (8 bytes each,
  // at least the base's size).
  std::vector<unsigned char> buffer(values.size() * std::max<std::size_t>(sizeof(double), H5Tget_size(base.get())));
  if (H5Dread(dataset, memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0 ||
      H5Tconvert(base.get(), H5T_NATIVE_DOUBLE, values.size(), buffer.data(), nullptr, H5P_DEFAULT) < 0)
    return false;
  std::memcpy(values.data(), buffer.data(), values.size() * sizeof(double));
  return true;
}

// Local: the shape as read_block_shape gives it, read on this rank alone.
std::optional<BlockShape> read_here(const DatasetSource& source, const Bound& bound) {
  const std::string where = "input file '" + source.file + "'";
  if (!std::filesystem::exists(source.file)) throw Error(where + " does not exist");
  const detail::Handle file(H5Fopen(source.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) throw Error(where + " is not a readable HDF5 file");
  // The mask's and the norms' grids and values, where the file has them.
  std::optional<BlockGrid> grids[2];
  std::vector<double> values[2];
  for (const bool norms : {false, true}) {
    const std::string path = norms ? norms_dataset(source.dataset) : mask_dataset(source.dataset);
    if (!detail::link_exists(file.get(), path)) continue;
    const std::string name = detail::display_name(path);
    const detail::Handle dataset(H5Dopen2(file.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
    if (!dataset.ok()) throw Error(where + ": '" + name + "' is not a dataset");
    const BlockGrid& grid = grids[norms].emplace(bound, shape_parts(dataset.get(), where, name, bound));
    // Read as doubles whatever the stored type (integers of up to 53 bits exactly), then checked: a mask holds
    // non-negative integers (bool included), norms non-negative numbers (docs/sparse.md).
    std::vector<double>& read = values[norms];
    read.resize(static_cast<std::size_t>(grid.num_blocks()));
    if (!read_as_doubles(dataset.get(), read))
      throw Error(where + ": reading dataset '" + name + "' failed (" +
                  (norms ? "norms hold numbers" : "a mask holds non-negative integers") + ")");
    for (std::size_t b = 0; b < read.size(); ++b) {
      const double x = read[b];
      const bool ok = norms ? x >= 0 : (x >= 0 && std::floor(x) == x);  // false for NaN
      if (!ok)
        throw Error(
            where + ": dataset '" + name + "' has " + format_number(x) + " at block " +
            to_string(grid.key(static_cast<Extent>(b))) + ": " +
            (norms ? "norms are non-negative numbers (0: absent)" : "a mask holds non-negative integers (0: absent)"));
    }
  }
  // The mask says which blocks are present where there is one; the norms bound the blocks' norms either way.
  const bool mask = grids[0].has_value(), norms = grids[1].has_value();
  if (!mask && !norms) return std::nullopt;
  const BlockGrid& grid = mask ? *grids[0] : *grids[1];
  std::vector<bool> present(values[mask ? 0 : 1].size());
  for (std::size_t b = 0; b < present.size(); ++b) present[b] = values[mask ? 0 : 1][b] > 0;
  if (!norms) return BlockShape(grid, std::move(present));
  const BlockShape bounded(*grids[1], std::vector<bool>(values[1].size(), true), values[1]);
  std::vector<double> on_grid = bounded.on(grid).norms();
  for (std::size_t b = 0; b < present.size(); ++b)
    if (!present[b]) on_grid[b] = 0;
  return BlockShape(grid, std::move(present), std::move(on_grid));
}

// A shape as bytes for a broadcast between ranks of one program: empty for none, else whether it has norms, its
// grid's parts per dimension, a byte per block and, with norms, a double per block.
std::string packed(const std::optional<BlockShape>& shape) {
  if (!shape) return {};
  std::string bytes(1, shape->has_norms() ? 'n' : 'm');
  auto append = [&](const void* data, std::size_t n) { bytes.append(static_cast<const char*>(data), n); };
  append(shape->grid().parts().data(), shape->grid().parts().size() * sizeof(Extent));
  for (bool present : shape->mask()) bytes.push_back(present ? 1 : 0);
  append(shape->norms().data(), shape->norms().size() * sizeof(double));
  return bytes;
}

std::optional<BlockShape> unpacked(const std::string& bytes, const Bound& bound) {
  if (bytes.empty()) return std::nullopt;
  const char* at = bytes.data() + 1;
  std::vector<Extent> parts(bound.size());
  std::memcpy(parts.data(), at, parts.size() * sizeof(Extent));
  at += parts.size() * sizeof(Extent);
  BlockGrid grid(bound, std::move(parts));
  std::vector<bool> present(static_cast<std::size_t>(grid.num_blocks()));
  for (std::size_t b = 0; b < present.size(); ++b) present[b] = *at++ != 0;
  if (bytes[0] != 'n') return BlockShape(std::move(grid), std::move(present));
  std::vector<double> norms(present.size());
  std::memcpy(norms.data(), at, norms.size() * sizeof(double));
  return BlockShape(std::move(grid), std::move(present), std::move(norms));
}

}  // namespace

std::optional<BlockShape> read_block_shape(const comm::Communicator& comm, const DatasetSource& source,
                                           const Bound& bound) {
  detail::silence_hdf5();
  // One rank opens the file, not every rank (a metadata storm on a parallel file system at scale).
  std::optional<BlockShape> shape;
  comm::collectively(comm, [&] {
    if (comm.rank() == 0) shape = read_here(source, bound);
  });
  const std::string bytes = comm::broadcast_string(comm, comm.rank() == 0 ? packed(shape) : std::string(), 0);
  if (comm.rank() != 0) shape = unpacked(bytes, bound);
  return shape;
}

}  // namespace einrel::io
