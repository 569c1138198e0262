#ifndef EINREL_RESHARDRUN_HPP
#define EINREL_RESHARDRUN_HPP

#include <einrel_Communicator.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_Reshard.hpp>

#include <optional>

namespace einrel::cli {

// What `einrel reshard --execute` measured: elements that differ from the expected target, over all ranks,
// for each of the three methods run on the same data, and their median seconds (slowest rank; the three
// alternate). Point-to-point does not run for a source with a pending reduction (a block layout cannot hold
// it).
struct ReshardRun {
  Extent wrong_synthesized = 0, wrong_naive = 0, wrong_point_to_point = 0;
  double synthesized_seconds = 0, naive_seconds = 0;
  std::optional<double> point_to_point_seconds;
  int repetitions = 0;
};

// Collective over `comm`, which must have plan.mesh.size() ranks: every rank fills its tile of plan.from
// with a function of each element's global index (summand p of a pending sum holding (p+1)·v, of a pending
// max or min v ± p, of a product v for p = 0 and 1 otherwise), runs the synthesized sequence, the naive
// allgather+slice one and, without a pending reduction, the point-to-point redistribution between the two
// types' block layouts, `repetitions` times each, and checks every element of its target tile.
ReshardRun measure_reshard(const comm::Communicator& comm, const redistribute::mesh::ReshardPlan& plan, Dtype dtype,
                           int repetitions);

}  // namespace einrel::cli

#endif
