#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>
#include <einrel_Hdf5Shapes.hpp>

#include <hdf5.h>

#include <filesystem>
#include <vector>

namespace einrel::io {

std::string mask_dataset(const std::string& dataset) { return dataset + ".mask"; }
std::string norms_dataset(const std::string& dataset) { return dataset + ".norms"; }

namespace {

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

}  // namespace

std::optional<BlockShape> read_block_shape(const DatasetSource& source, const Bound& bound) {
  detail::silence_hdf5();
  const std::string where = "input file '" + source.file + "'";
  if (!std::filesystem::exists(source.file)) throw Error(where + " does not exist");
  const detail::Handle file(H5Fopen(source.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) throw Error(where + " is not a readable HDF5 file");
  for (const bool norms : {false, true}) {
    const std::string path = norms ? norms_dataset(source.dataset) : mask_dataset(source.dataset);
    if (!detail::link_exists(file.get(), path)) continue;
    const std::string name = detail::display_name(path);
    const detail::Handle dataset(H5Dopen2(file.get(), path.c_str(), H5P_DEFAULT), H5Dclose);
    if (!dataset.ok()) throw Error(where + ": '" + name + "' is not a dataset");
    const BlockGrid grid(bound, shape_parts(dataset.get(), where, name, bound));
    const auto n = static_cast<std::size_t>(grid.num_blocks());
    std::vector<bool> present(n);
    bool read = false;
    if (norms) {
      std::vector<double> values(n);
      read = H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0;
      for (std::size_t b = 0; b < n; ++b) present[b] = values[b] > 0;
    } else {
      std::vector<unsigned char> values(n);
      read = H5Dread(dataset.get(), H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0;
      for (std::size_t b = 0; b < n; ++b) present[b] = values[b] != 0;
    }
    if (!read) throw Error(where + ": reading dataset '" + name + "' failed (a mask holds integers, norms floats)");
    return BlockShape(grid, std::move(present));
  }
  return std::nullopt;
}

}  // namespace einrel::io
