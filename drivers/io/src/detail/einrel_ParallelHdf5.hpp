#ifndef EINREL_PARALLELHDF5_HPP
#define EINREL_PARALLELHDF5_HPP

// Tensors in HDF5 files read and written by every rank at once (docs/cli.md: C order, f32/f64): each
// rank transfers only the boxes of its own blocks, through MPI-IO (collective file and dataset
// operations; raw data in independent or collective transfers: einrel_Hdf5Transfer.hpp).

#include <einrel_BlockGrid.hpp>
#include <einrel_Bound.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_Dtype.hpp>

#include <memory>
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

// The input files of a run, read by every rank at once. A file is opened (collectively, through MPI-IO)
// the first time one of its datasets is read and stays open until this object is destroyed, which is
// collective too: every rank must destroy it at the same point, as it does when an agreed failure
// unwinds. Opening a file costs every rank collectives and file-system metadata operations, so a graph
// whose inputs share a file opens it once.
class InputFiles {
 public:
  // Reads through comm (its ranks are the readers).
  explicit InputFiles(comm::Communicator comm);
  ~InputFiles();
  InputFiles(const InputFiles&) = delete;
  InputFiles& operator=(const InputFiles&) = delete;

  // Collective over the communicator: every rank reads its `boxes` (any number, possibly none) of
  // `source`, which must hold `dtype` elements of shape `bound`. Throws the same Error on every rank when
  // any rank fails (a missing file or dataset, another type or shape, a failed read). The dataset stays
  // open until this object is destroyed.
  void read(const DatasetSource& source, Dtype dtype, const Bound& bound, const std::vector<HostBox>& boxes);
  // Collective: opens `source` as read() does (once), reading nothing.
  void open(const DatasetSource& source, Dtype dtype, const Bound& bound);
  // Local (no communication): this rank reads its `boxes` of `source`, opened before by open() or read().
  // Throws Error on this rank alone when the read fails.
  void read_local(const DatasetSource& source, Dtype dtype, const std::vector<HostBox>& boxes);

 private:
  struct OpenFiles;
  comm::Communicator comm_;
  std::unique_ptr<OpenFiles> open_;
};

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
// The datasets named in `zero_filled` (block-sparse outputs, docs/sparse.md) need not be covered: they are
// created with fill value zero, written when their space is allocated, so what no rank writes reads as zero.
// Each of `masks` (the same on every rank) is written whole by rank 0 as an unsigned 8-bit dataset.
struct DatasetMask {
  std::string name;
  std::vector<Extent> dims;
  std::vector<unsigned char> values;
};
void write_boxes(const comm::Communicator& comm, const std::string& path, const std::vector<DatasetBoxes>& datasets,
                 const std::vector<std::string>& zero_filled = {}, const std::vector<DatasetMask>& masks = {});

}  // namespace einrel::io

#endif
