#ifndef EINREL_PARALLELHDF5_HPP
#define EINREL_PARALLELHDF5_HPP

// Tensors in HDF5 files read and written by every rank at once (DESIGN.md §4.2: C order, f32/f64): each
// rank transfers only the boxes of its own blocks, through MPI-IO with collective transfers.

#include <einrel_BlockGrid.hpp>
#include <einrel_Bound.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_Dtype.hpp>

#include <string>
#include <utility>
#include <vector>

namespace einrel::io {

// Where an input's elements are: a file and a dataset in it, "/A" at the root or "/group/A".
struct DatasetSource {
  std::string file;
  std::string dataset;
};

// Parses `--bind` text "NAME=FILE.h5:/group/dataset" (the dataset path starts with '/'; the last ":/"
// separates it from the file) or "NAME=FILE.h5" (the root dataset NAME). Throws Error naming the text.
std::pair<std::string, DatasetSource> parse_binding(const std::string& text);

// A box of a tensor and the host memory holding its elements in C order.
struct HostBox {
  Box box;
  void* data;
};
struct ConstHostBox {
  Box box;
  const void* data;
};

// Collective over comm: every rank reads its `boxes` (any number, possibly none) of `source`, which must
// hold `dtype` elements of shape `bound`. Throws the same Error on every rank when any rank fails (a
// missing file or dataset, another type or shape, a failed read).
void read_boxes(const redistribute::Communicator& comm, const DatasetSource& source, Dtype dtype, const Bound& bound,
                const std::vector<HostBox>& boxes);

// One dataset of an output file and this rank's boxes of it.
struct DatasetBoxes {
  std::string name;  // a root dataset
  Dtype dtype;
  Bound bound;
  std::vector<ConstHostBox> boxes;
};

// Collective over comm: creates the HDF5 file `path` with every dataset of `datasets` (the same list of
// names, types and bounds on every rank), each rank writing its own boxes; together they should cover
// each dataset once. All or nothing: the file is written under a temporary name and renamed by rank 0
// only after every rank has written and closed it; on failure (the same Error on every rank) no file is
// left at `path` and an existing one is untouched.
void write_boxes(const redistribute::Communicator& comm, const std::string& path,
                 const std::vector<DatasetBoxes>& datasets);

}  // namespace einrel::io

#endif
