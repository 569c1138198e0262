#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>

#include <vector>

namespace einrel::io::detail {
namespace {

std::string describe_type(hid_t type) {
  const auto size = std::to_string(8 * H5Tget_size(type));
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return "float" + size;
    case H5T_INTEGER:
      return "integer" + size;
    case H5T_STRING:
      return "string";
    default:
      return "a non-numeric type";
  }
}

}  // namespace

// True when every link on the way to `path` exists (H5Lexists fails, rather than answering no, when
// a group on the way is missing).
bool link_exists(hid_t file, const std::string& path) {
  for (std::size_t end = path.find('/', 1); true; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (!prefix.empty() && prefix != "/" && H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (end == std::string::npos) return true;
  }
}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    close();
    id_ = other.id_;
    close_ = other.close_;
    other.id_ = -1;
  }
  return *this;
}

bool Handle::close() {
  if (id_ < 0) return true;
  const herr_t rc = close_(id_);
  id_ = -1;
  return rc >= 0;
}

void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

hid_t native_type(Dtype t) { return t == Dtype::f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE; }

std::string display_name(const std::string& dataset) {
  if (!dataset.empty() && dataset[0] == '/' && dataset.find('/', 1) == std::string::npos) return dataset.substr(1);
  return dataset;
}

Handle open_checked_dataset(hid_t file, const std::string& where, const std::string& dataset, Dtype dtype,
                            const Bound& bound) {
  const std::string name = display_name(dataset);
  const bool at_root = name.find('/') == std::string::npos;
  if (name.empty() || !link_exists(file, dataset))
    throw Error(where + " has no dataset '" + name + "'" + (at_root ? " at its root" : ""));
  Handle handle(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!handle.ok()) throw Error(where + ": '" + name + "' is not a dataset");

  Handle type(H5Dget_type(handle.get()), H5Tclose);
  const bool is_float = type.ok() && H5Tget_class(type.get()) == H5T_FLOAT;
  const std::size_t want_size = dtype == Dtype::f32 ? 4 : 8;
  if (!is_float || H5Tget_size(type.get()) != want_size)
    throw Error(where + ": dataset '" + name + "' is " + describe_type(type.get()) + " but the graph declares " +
                std::string(dtype_name(dtype)));

  Handle space(H5Dget_space(handle.get()), H5Sclose);
  if (space.ok() && H5Sget_simple_extent_type(space.get()) == H5S_NULL)
    throw Error(where + ": dataset '" + name + "' has no elements (a null dataspace) but the graph declares " +
                to_string(bound));
  const int rank = space.ok() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  Bound shape(rank > 0 ? rank : 0);
  if (rank > 0) {
    std::vector<hsize_t> dims(rank);
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    for (int d = 0; d < rank; ++d) shape[d] = static_cast<Extent>(dims[d]);
  }
  if (rank < 0 || shape != bound)
    throw Error(where + ": dataset '" + name + "' has shape " + to_string(shape) + " but the graph declares " +
                to_string(bound));
  return handle;
}

}  // namespace einrel::io::detail
