#include <einrel_AtomicFile.hpp>
#include <einrel_Error.hpp>
#include <einrel_Hdf5Io.hpp>

#include <hdf5.h>

#include <filesystem>

namespace einrel::io {
namespace {

// Owns one HDF5 identifier.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// einrel reports HDF5 failures as Errors; HDF5's own error-stack printing would only add noise.
void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

hid_t native_type(Dtype t) { return t == Dtype::f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE; }

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

HostData read_dataset(const std::string& path, const std::string& name, Dtype dtype, const Bound& bound) {
  silence_hdf5();
  const std::string where = "input file '" + path + "'";
  if (!std::filesystem::exists(path)) throw Error(where + " does not exist");
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) throw Error(where + " is not a readable HDF5 file");
  if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0)
    throw Error(where + " has no dataset '" + name + "' at its root");
  Handle dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.ok()) throw Error(where + ": '" + name + "' is not a dataset");

  Handle type(H5Dget_type(dataset.get()), H5Tclose);
  const bool is_float = H5Tget_class(type.get()) == H5T_FLOAT;
  const std::size_t want_size = dtype == Dtype::f32 ? 4 : 8;
  if (!is_float || H5Tget_size(type.get()) != want_size)
    throw Error(where + ": dataset '" + name + "' is " + describe_type(type.get()) + " but the graph declares " +
                std::string(dtype_name(dtype)));

  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  Bound shape(rank > 0 ? rank : 0);
  if (rank > 0) {
    std::vector<hsize_t> dims(rank);
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    for (int d = 0; d < rank; ++d) shape[d] = static_cast<Extent>(dims[d]);
  }
  if (rank < 0 || shape != bound)
    throw Error(where + ": dataset '" + name + "' has shape " + to_string(shape) + " but the graph declares " +
                to_string(bound));

  return dispatch_dtype(dtype, [&](auto scalar) -> HostData {
    std::vector<decltype(scalar)> values(num_elements(bound));
    if (H5Dread(dataset.get(), native_type(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
      throw Error(where + ": reading dataset '" + name + "' failed");
    return values;
  });
}

void write_datasets(const std::string& path, const std::vector<NamedHostTensor>& tensors) {
  silence_hdf5();
  AtomicFile out(path);
  {
    Handle file(H5Fcreate(out.temporary_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!file.ok()) throw Error("cannot create output file '" + path + "'");
    for (const auto& t : tensors) {
      std::vector<hsize_t> dims(t.bound.begin(), t.bound.end());
      Handle space(t.bound.empty() ? H5Screate(H5S_SCALAR)
                                   : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                   H5Sclose);
      const Dtype dtype = std::holds_alternative<std::vector<float>>(t.data) ? Dtype::f32 : Dtype::f64;
      Handle dataset(H5Dcreate2(file.get(), t.name.c_str(), native_type(dtype), space.get(), H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT),
                     H5Dclose);
      const void* data = std::visit([](const auto& v) -> const void* { return v.data(); }, t.data);
      if (!space.ok() || !dataset.ok() ||
          H5Dwrite(dataset.get(), native_type(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        throw Error("writing dataset '" + t.name + "' to '" + path + "' failed");
    }
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) throw Error("writing output file '" + path + "' failed");
  }
  out.commit();
}

}  // namespace einrel::io
