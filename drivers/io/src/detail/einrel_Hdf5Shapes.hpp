#ifndef EINREL_HDF5SHAPES_HPP
#define EINREL_HDF5SHAPES_HPP

// The shapes of block-sparse tensors in HDF5 files (docs/sparse.md "In HDF5 files"): next to a tensor's
// dataset "/A", a dataset "/A.mask" (integers, non-zero for a present block) or "/A.norms" (floats, a
// block is present when its norm is above zero), of one entry per block of the tensor's even grid with
// that many parts per dimension.

#include <einrel_BlockShape.hpp>
#include <einrel_ParallelHdf5.hpp>

#include <optional>
#include <string>

namespace einrel::io {

// The names of a tensor dataset's shape datasets: "/A.mask" and "/A.norms" for "/A".
std::string mask_dataset(const std::string& dataset);
std::string norms_dataset(const std::string& dataset);

// Collective over comm: the shape of the tensor of `bound` in `source` from its mask dataset, else its norms
// dataset, or nothing when the file has neither; with a norms dataset, the shape bounds its blocks' norms by it
// (on the mask's grid where both exist, BlockShape::on). Rank 0 opens the file and reads the small datasets
// whole; the others receive the shape from it. Throws Error on every rank, naming the file and dataset, for a
// mask of another rank, more parts than the extent, values that are no mask or norms, or an unreadable file.
std::optional<BlockShape> read_block_shape(const comm::Communicator& comm, const DatasetSource& source,
                                           const Bound& bound);

}  // namespace einrel::io

#endif
