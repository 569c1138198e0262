#include <einrel_ExecutionReport.hpp>
#include <einrel_Wait.hpp>

#include <algorithm>
#include <utility>

namespace einrel::engine {

Extent ExecutionReport::floats_moved() const {
  Extent n = 0;
  for (const RankTraffic& r : ranks) n += r.floats_sent;
  return n;
}

double ExecutionReport::evaluation_seconds() const {
  double seconds = 0;
  for (const VertexFigures& v : vertices) seconds += v.seconds();
  return seconds;
}

namespace {

// Collective: the rank whose vertices took longest in all (the lowest such rank), and its times per vertex.
std::pair<int, std::vector<VertexTimes>> timed_rank_times(const comm::Communicator& comm,
                                                          const std::vector<VertexMeasure>& vertices) {
  static_assert(sizeof(VertexTimes) == 4 * sizeof(double), "VertexTimes is sent as four doubles");
  std::vector<VertexTimes> mine(vertices.begin(), vertices.end());
  double total = 0;
  for (const VertexTimes& t : mine) total += t.seconds();
  std::vector<double> totals(static_cast<std::size_t>(comm.size()));
  MPI_Request request;
  comm::complete(MPI_Iallgather(&total, 1, MPI_DOUBLE, totals.data(), 1, MPI_DOUBLE, comm.get(), &request), request,
                 "MPI_Iallgather");
  const int slowest = static_cast<int>(std::max_element(totals.begin(), totals.end()) - totals.begin());
  comm::complete(MPI_Ibcast(mine.data(), static_cast<int>(4 * mine.size()), MPI_DOUBLE, slowest, comm.get(), &request),
                 request, "MPI_Ibcast");
  return {slowest, std::move(mine)};
}

}  // namespace

ExecutionReport gather_execution_report(const comm::Communicator& comm, const Graph& graph,
                                        const std::vector<VertexMeasure>& vertices, const RankTraffic& traffic,
                                        std::size_t allocated, const std::vector<long long>& nonfinite) {
  const std::size_t n = graph.size(), R = static_cast<std::size_t>(comm.size());
  // Per rank, in one message: its traffic and allocator peak.
  constexpr int per_rank = 7;
  const long long mine[per_rank] = {traffic.floats_sent,
                                    traffic.floats_received,
                                    static_cast<long long>(traffic.peak_block_bytes),
                                    traffic.tuples,
                                    traffic.floats_read,
                                    static_cast<long long>(allocated),
                                    static_cast<long long>(traffic.flops)};
  std::vector<long long> all(per_rank * R);
  MPI_Request request;
  comm::complete(
      MPI_Iallgather(mine, per_rank, MPI_LONG_LONG, all.data(), per_rank, MPI_LONG_LONG, comm.get(), &request), request,
      "MPI_Iallgather");
  // Per vertex: the timed rank's times, and the floats sent with the non-finite counts summed.
  const auto [timed_rank, times] = timed_rank_times(comm, vertices);
  std::vector<long long> counts(3 * n), sums(3 * n);
  for (VertexId v = 0; v < n; ++v) {
    counts[3 * v] = vertices[v].floats_sent;
    counts[3 * v + 1] = nonfinite[2 * v];
    counts[3 * v + 2] = nonfinite[2 * v + 1];
  }
  comm::complete(
      MPI_Iallreduce(counts.data(), sums.data(), static_cast<int>(3 * n), MPI_LONG_LONG, MPI_SUM, comm.get(), &request),
      request, "MPI_Iallreduce");

  ExecutionReport report;
  for (std::size_t r = 0; r < R; ++r) {
    const long long* x = &all[per_rank * r];
    report.ranks.push_back({x[0], x[1], static_cast<std::size_t>(x[2]), x[3], x[4], static_cast<double>(x[6])});
    report.peak_allocated_bytes.push_back(static_cast<std::size_t>(x[5]));
    if (x[3] > 0) ++report.computing_ranks;
  }
  report.timed_rank = timed_rank;
  for (VertexId v = 0; v < n; ++v) {
    VertexFigures& f = report.vertices.emplace_back();
    static_cast<VertexTimes&>(f) = times[v];
    f.floats_moved = sums[3 * v];
  }
  for (VertexId v : graph.outputs())
    if (sums[3 * v + 1] + sums[3 * v + 2] > 0)
      report.nonfinite_outputs.push_back({v, sums[3 * v + 1], sums[3 * v + 2]});
  return report;
}

}  // namespace einrel::engine
