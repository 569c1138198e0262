#ifndef EINREL_TESTDRYRUN_HPP
#define EINREL_TESTDRYRUN_HPP

#include <einrel_Communicator.hpp>
#include <einrel_DryRun.hpp>
#include <einrel_Engine.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

namespace einrel::test {

// `mine` summed over the ranks of comm (collective).
inline Extent sum_over_ranks(const comm::Communicator& comm, Extent mine) {
  long long in = mine, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, comm.get());
  return static_cast<Extent>(out);
}

// What `execute` measured on this rank equals the dry run of the same schedule, to the float and the byte:
// floats sent and received, peak block bytes, kernel calls, input floats read again, and per vertex the floats moved
// over all ranks (collective).
template <class MemorySpace>
void expect_dry_run_matches(const comm::Communicator& comm, const Graph& g, const engine::Schedule& schedule,
                            const engine::EngineResult<MemorySpace>& result) {
  const engine::Traffic dry = engine::dry_run(g, schedule);
  const engine::RankTraffic& predicted = dry.ranks[static_cast<std::size_t>(comm.rank())];
  EXPECT_EQ(result.traffic.floats_sent, predicted.floats_sent);
  EXPECT_EQ(result.traffic.floats_received, predicted.floats_received);
  EXPECT_EQ(result.traffic.peak_block_bytes, predicted.peak_block_bytes);
  EXPECT_EQ(result.traffic.tuples, predicted.tuples);
  EXPECT_EQ(result.traffic.flops, predicted.flops);
  EXPECT_EQ(result.traffic.floats_read, predicted.floats_read);
  for (VertexId v = 0; v < g.size(); ++v)
    EXPECT_EQ(sum_over_ranks(comm, result.vertices[v].floats_sent), dry.floats_moved[v]) << g.vertex(v).name;
}

}  // namespace einrel::test

#endif
