#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>

#include <cerrno>
#include <cstring>
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

// Throws when `dataset` is stored through a filter this HDF5 cannot decode (h5py's lzf, a plugin not on
// HDF5_PLUGIN_PATH, an encoder-only szip), naming it: HDF5 itself would only fail the read.
void check_filters(hid_t dataset, const std::string& where, const std::string& name) {
  const Handle dcpl(H5Dget_create_plist(dataset), H5Pclose);
  const int filters = dcpl.ok() ? H5Pget_nfilters(dcpl.get()) : 0;
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t values = 0;
    char filter[256] = {};
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &values, nullptr, sizeof filter, filter, &config);
    if (id < 0) continue;
    unsigned info = 0;
    const bool decodes =
        H5Zfilter_avail(id) > 0 && H5Zget_filter_info(id, &info) >= 0 && (info & H5Z_FILTER_CONFIG_DECODE_ENABLED);
    if (!decodes)
      throw Error(where + ": dataset '" + name + "' is stored through HDF5 filter '" + filter + "' (id " +
                  std::to_string(id) +
                  "), which this HDF5 cannot decode (not built in, no plugin on HDF5_PLUGIN_PATH)");
  }
}

// Where `path` (whose links exist) is a soft or external link that leads nowhere: what it is, "a soft link to
// '/raw/A'" or "an external link to 'other.h5:/A'"; else empty.
std::string dangling_link(hid_t file, const std::string& path) {
  H5L_info_t info{};
  if (H5Lget_info(file, path.c_str(), &info, H5P_DEFAULT) < 0 || info.type == H5L_TYPE_HARD) return "";
  if (H5Oexists_by_name(file, path.c_str(), H5P_DEFAULT) > 0) return "";
  std::vector<char> value(info.u.val_size + 1, '\0');
  if (H5Lget_val(file, path.c_str(), value.data(), value.size(), H5P_DEFAULT) < 0) return "a link";
  if (info.type == H5L_TYPE_SOFT) return "a soft link to '" + std::string(value.data()) + "'";
  const char *target_file = nullptr, *target_path = nullptr;
  if (info.type != H5L_TYPE_EXTERNAL ||
      H5Lunpack_elink_val(value.data(), value.size(), nullptr, &target_file, &target_path) < 0)
    return "a user-defined link";
  return "an external link to '" + std::string(target_file) + ":" + target_path + "'";
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

std::string failure_reason() {
  // The innermost description of the stack; MPI-IO's error string, when it holds one, ends with the OS's reason.
  std::string innermost;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &innermost);
  for (int code : {ENOSPC, EDQUOT, EFBIG, EACCES, EPERM, EROFS, EIO, ENOENT, ENOTDIR, EISDIR, ENAMETOOLONG}) {
    const std::string reason = std::strerror(code);
    if (innermost.find(reason) != std::string::npos) return reason;
  }
  return "";
}

std::string with_reason(const std::string& failure, const std::string& reason) {
  return reason.empty() ? failure : failure + ": " + reason;
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
  if (const std::string target = dangling_link(file, dataset); !target.empty())
    throw Error(where + ": '" + name + "' is " + target + ", which leads to no object");
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
  check_filters(handle.get(), where, name);
  return handle;
}

}  // namespace einrel::io::detail
