#ifndef EINREL_DRYRUN_HPP
#define EINREL_DRYRUN_HPP

#include <einrel_Graph.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Traffic.hpp>

namespace einrel::engine {

// The engine's dry run (docs/engine.md): what execute() will measure on each of the schedule's ranks,
// from the schedule alone — no data, no MPI, any number of ranks. It follows the engine's steps per
// vertex: operand copies allocated (a block that stays on its rank with the same cut is shared, not
// copied), exchanges, producers released after their last reader, one partial block per output block
// per rank (later tuples of that block accumulate into it), operands released, receive blocks for the partials of the
// owned output blocks, partials sent to their owners released. The block bytes are sampled after every allocation, as
// the engine does.
// With it, the estimate of each rank's allocated memory at its peak (Traffic::peak_memory_bytes): the same
// walk plus the kernel temporaries of each tuple and the exchange buffers under `limits`.
Traffic dry_run(const Graph& graph, const Schedule& schedule, const redistribute::ExchangeLimits& limits = {});

}  // namespace einrel::engine

#endif
