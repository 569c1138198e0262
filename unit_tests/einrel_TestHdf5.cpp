#include <einrel_AtomicFile.hpp>
#include <einrel_Error.hpp>
#include <einrel_Hdf5Detail.hpp>
#include <einrel_TestHdf5.hpp>

#include <filesystem>

namespace einrel::io {

using detail::Handle;
using detail::native_type;

HostData read_dataset(const std::string& path, const std::string& name, Dtype dtype, const Bound& bound) {
  detail::silence_hdf5();
  const std::string where = "input file '" + path + "'";
  if (!std::filesystem::exists(path)) throw Error(where + " does not exist");
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) throw Error(where + " is not a readable HDF5 file");
  const Handle dataset = detail::open_checked_dataset(file.get(), where, name, dtype, bound);

  return dispatch_dtype(dtype, [&](auto scalar) -> HostData {
    std::vector<decltype(scalar)> values(num_elements(bound));
    if (H5Dread(dataset.get(), native_type(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
      throw Error(where + ": reading dataset '" + name + "' failed");
    return values;
  });
}

void write_datasets(const std::string& path, const std::vector<NamedHostTensor>& tensors) {
  detail::silence_hdf5();
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
