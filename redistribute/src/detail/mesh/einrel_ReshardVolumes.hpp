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
// reports for a transition run by collectives, and what its dry run predicts. Given `ranks_per_node` > 0,
// also the off-node part (exchange_volumes): all of a rank's data in a step whose group (of the rank, as
// execute_reshard forms it) holds a rank of another node, its tile in an allpermute from another node.
ExchangeVolumes reshard_volumes(const ReshardPlan& plan, int ranks_per_node = 0);

// Per step of `plan`, whether one of its groups (its pairs, for allpermute) holds ranks of two nodes of
// `ranks_per_node` ranks each (ranks numbered node by node).
std::vector<bool> steps_across_nodes(const ReshardPlan& plan, int ranks_per_node);

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
