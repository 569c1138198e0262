#ifndef EINREL_RESHARDVOLUMES_HPP
#define EINREL_RESHARDVOLUMES_HPP

#include <einrel_RedistributionPlan.hpp>
#include <einrel_Reshard.hpp>

#include <vector>

namespace einrel::redistribute::mesh {

// The elements each rank sends to and receives from others when execute_reshard runs `plan`, indexed by
// rank, counted as the data a collective's members exchange (the algorithms MPI implementations use move
// no less): allgather of n members (n−1)·tile, alltoall and reducescatter (n−1)/n of the tile before,
// allreduce twice that, allpermute the tile for a rank that moves, dynslice nothing. What the engine
// reports for a transition run by collectives, and what its dry run predicts.
ExchangeVolumes reshard_volumes(const ReshardPlan& plan);

// Per step, the element counts of the temporaries execute_reshard holds at once in it, beside the tile it
// was given and the tile it returns: the previous step's tile, the step's tile when it is not the last, and
// the packing buffers (a gathered buffer for allgather, send and receive buffers for alltoall, a send buffer
// for reducescatter), counted as if none could be elided: an upper bound for a host memory space.
std::vector<std::vector<Extent>> reshard_temporaries(const ReshardPlan& plan);

// The BlockPool buffers (element counts of its size classes) that cover every step's temporaries: each size
// class as often as the step needing most of it. What the engine's memory walk takes and its dry run counts.
std::vector<Extent> reshard_scratch(const ReshardPlan& plan);

}  // namespace einrel::redistribute::mesh

#endif
