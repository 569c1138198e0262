#ifndef EINREL_TESTHDF5_HPP
#define EINREL_TESTHDF5_HPP

#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>

#include <string>
#include <variant>
#include <vector>

namespace einrel::io {

// Tensor elements on the host in C order, f32 or f64.
using HostData = std::variant<std::vector<float>, std::vector<double>>;

struct NamedHostTensor {
  std::string name;
  Bound bound;
  HostData data;
};

// Reads the root dataset `name` of the HDF5 file at `path` (docs/cli.md: C order). Throws Error
// naming the file and dataset when the file is missing or unreadable, the dataset is missing, or its
// type or shape differs from `dtype` / `bound`.
HostData read_dataset(const std::string& path, const std::string& name, Dtype dtype, const Bound& bound);

// Writes each tensor as a root dataset (rank-0 tensors as scalar datasets) into a new HDF5 file at
// `path`. The file is written under a temporary name and renamed only when everything is written, so
// on failure (Error thrown) no file is left at `path` and an existing one is untouched.
void write_datasets(const std::string& path, const std::vector<NamedHostTensor>& tensors);

}  // namespace einrel::io

#endif
