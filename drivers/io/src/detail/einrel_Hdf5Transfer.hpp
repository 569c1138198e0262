#ifndef EINREL_HDF5TRANSFER_HPP
#define EINREL_HDF5TRANSFER_HPP

// Internal to einrel::io: how a rank's boxes of a dataset move between the file and their memory through
// parallel HDF5 (docs/cli.md "HDF5 through MPI-IO", measured in docs/scale.md "HDF5 transfers").

#include <einrel_BlockGrid.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_Hdf5Detail.hpp>

#include <hdf5.h>

#include <optional>
#include <string>
#include <vector>

namespace einrel::io::detail {

// Independent: one H5Dread/H5Dwrite per box, each rank on its own. Collective: one call per rank and dataset
// (H5FD_MPIO_COLLECTIVE), the rank's boxes as one selection, so that MPI-IO's two-phase I/O turns many
// small strided accesses into few large ones.
enum class Transfer { independent, collective };

// Collective over comm: the transfer every rank of comm uses, the same on each: EINREL_HDF5_TRANSFER set to
// "collective" on every rank, else independent (faster in every case measured here: docs/scale.md "HDF5
// transfers"). Throws Error on a value other than those two.
Transfer choose_transfer(const comm::Communicator& comm);

// The dataset transfer properties of `transfer` through MPI-IO. Throws Error when HDF5 cannot make them.
Handle transfer_properties(Transfer transfer);

// A box of a dataset and the memory of its elements in C order.
struct BoxMemory {
  const Box* box;
  void* data;
};

enum class Direction { read, write };

// Moves `boxes` between `dataset` (opened or created through MPI-IO) and their memory as elements of `dtype`.
// Independent: local, one call per box, up to the first failure. Collective: collective over the file's
// communicator (every rank calls it, with or without boxes); one box moves from its own memory (its C order is
// its file order), several through one buffer in the selection's file order. A rank whose boxes overlap (no
// single selection holds them) takes part with nothing selected and then moves them independently; a rank
// that fails before the call takes part with nothing selected. Returns `failure` with HDF5's reason (or what
// failed before the call) when any of this rank's transfers failed.
std::optional<std::string> move_boxes(hid_t dataset, Dtype dtype, Direction direction, Transfer transfer,
                                      const std::vector<BoxMemory>& boxes, const std::string& failure);

}  // namespace einrel::io::detail

#endif
