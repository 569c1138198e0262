// The engine's operand transitions by synthesized collectives against its point-to-point exchange, end to end:
// graphs with explicit plans whose transitions the policies handle differently, each executed by
// engine::execute under the `point-to-point` and the `auto` policy (alternating, after engine::warm_memory; the
// slowest rank's time, median of --reps). Cases, with the tile a rank holds at about --mib MiB:
//   deferred   C = A·B with its inner label cut R ways (every rank a partial C), D = relu(C) cut over its rows
//              (and columns from R = 4): reduce on the owners + exchange, or one reduce-scatter sequence
//   replicate  S = tanh(B) cut by rows, C = A·S with A's rows cut: every rank needs all of S (an allgather)
//   transpose  S = tanh(B) cut by rows, T = -S cut by columns (an alltoall)
// Per case: the medians and their ratio (point-to-point / auto), floats moved (all ranks), the dry run's
// estimate of the busiest rank's peak memory under each policy, and the collectives `auto` chose; then the
// time outside the kernels under each policy against a peer outside einrel: MPI's own collective for the
// same data on plain warm buffers (mpi_peer), with its bandwidth as a check on the peer.
//   OMP_NUM_THREADS=1 mpiexec.mpich -n 2 build/perf_tests/einrel_transition_bench --mib 32 --reps 7
#include <einrel_DryRun.hpp>
#include <einrel_Engine.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_WarmMemory.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "einrel_BenchOptions.hpp"

namespace {

using namespace einrel;
using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using comm::Communicator;
using partition::PartitionVector;

struct Case {
  std::string name;
  Graph graph;
  std::vector<PartitionVector> plan;
};

// R = 2 or 4 ranks; n×n tiles of `elements` per rank.
std::vector<Case> cases(int R, Extent elements) {
  const Extent cols = R == 4 ? 2 : 1, rows = R / cols;
  std::vector<Case> out;
  {  // the partial C is the whole n×n on every rank
    const Extent n = static_cast<Extent>(std::sqrt(static_cast<double>(elements))) / 64 * 64;
    const std::string text = "input A f64[" + std::to_string(n) + ",64]\ninput B f64[64," + std::to_string(n) +
                             "]\nC = einsum(\"ij,jk->ik\", A, B)\nD = einsum(\"ik->ik\", C, map=relu)\noutput D\n";
    out.push_back({"deferred",
                   parse_graph(text, "deferred.ein"),
                   {{}, {}, PartitionVector("ijk", {1, R, 1}), PartitionVector("ik", {rows, cols})}});
  }
  {  // S is n×n, R row tiles of `elements`
    const Extent n = static_cast<Extent>(std::sqrt(static_cast<double>(elements * R))) / 64 * 64;
    const std::string text = "input A f64[" + std::to_string(8 * R) + "," + std::to_string(n) + "]\ninput B f64[" +
                             std::to_string(n) + "," + std::to_string(n) +
                             "]\nS = einsum(\"ij->ij\", B, map=tanh)\nC = einsum(\"ij,jk->ik\", A, S)\noutput C\n";
    out.push_back({"replicate",
                   parse_graph(text, "replicate.ein"),
                   {{}, {}, PartitionVector("ij", {R, 1}), PartitionVector("ijk", {R, 1, 1})}});
    const std::string transpose = "input B f64[" + std::to_string(n) + "," + std::to_string(n) +
                                  "]\nS = einsum(\"ij->ij\", B, map=tanh)\nT = einsum(\"ij->ij\", S, map=neg)\n"
                                  "output T\n";
    out.push_back({"transpose",
                   parse_graph(transpose, "transpose.ein"),
                   {{}, PartitionVector("ij", {R, 1}), PartitionVector("ij", {1, R})}});
  }
  return out;
}

double slowest(const Communicator& comm, double seconds) {
  double out = 0;
  MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_MAX, comm.get());
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One policy's schedule, warmed exchange and inputs, ready to execute again and again.
struct Prepared {
  engine::Schedule schedule;
  engine::RankSteps steps;
  redistribute::Exchange<Memory> exchange;
  std::vector<std::optional<engine::AnyDistributed<Memory>>> inputs;

  Prepared(const Communicator& comm, const Case& c, engine::TransitionPolicy policy)
      : schedule(c.graph, c.plan, comm.size(), policy),
        steps(engine::rank_steps(c.graph, schedule, comm.rank())),
        exchange(comm),
        inputs(c.graph.size()) {
    engine::warm_memory(Exec{}, exchange, c.graph, schedule);
    engine::prepare_collectives(Exec{}, exchange, c.graph, schedule);
    for (VertexId v = 0; v < c.graph.size(); ++v) {
      if (!c.graph.vertex(v).is_input()) continue;
      auto d = redistribute::DistributedTensorRelation<double, Memory>::allocate(c.graph.vertex(v).name, comm,
                                                                                 schedule.layout(v));
      for (const auto& [key, block] : d.local()) Kokkos::deep_copy(block.view(), 0.5);
      inputs[v] = std::move(d);
    }
  }
  // The whole execution and its time outside the block kernels (redistributions and reductions), each the
  // slowest rank's.
  std::pair<double, double> run(const Communicator& comm, const Case& c) {
    MPI_Barrier(comm.get());
    const auto start = std::chrono::steady_clock::now();
    const auto result = engine::execute(Exec{}, exchange, c.graph, schedule, steps, inputs);
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double moving = 0;
    for (const engine::VertexMeasure& m : result.vertices) moving += m.seconds() - m.kernel_seconds;
    return {slowest(comm, total), slowest(comm, moving)};
  }
};

std::string collectives_of(const engine::Schedule& s) {
  std::string text;
  s.for_each_collective_transition([&](VertexId, std::size_t, const engine::Transition& t) {
    text += (text.empty() ? "" : "; ") + redistribute::mesh::steps_text(*t.plan);
  });
  return text.empty() ? "-" : text;
}

// The peer outside einrel: MPI's own collective for the case's data movement on plain, warm buffers (the
// slowest rank's time, median of `reps`), and the bytes a rank receives in it. deferred: MPI_Reduce_scatter_block
// of the n×n partial into row slabs; replicate: MPI_Allgather of the row tiles; transpose: MPI_Alltoall of the
// row tiles' column pieces.
std::pair<double, double> mpi_peer(const Communicator& comm, const Case& c, int reps) {
  const Bound shape = c.graph.vertex(*c.graph.find(c.name == "deferred" ? "C" : "S")).bound;
  const int R = comm.size();
  const int whole = static_cast<int>(shape[0] * shape[1]), tile = whole / R;
  std::vector<double> send(static_cast<std::size_t>(whole), 0.5), receive(static_cast<std::size_t>(whole), 0.0);
  auto call = [&] {
    if (c.name == "deferred")
      MPI_Reduce_scatter_block(send.data(), receive.data(), tile, MPI_DOUBLE, MPI_SUM, comm.get());
    else if (c.name == "replicate")
      MPI_Allgather(send.data(), tile, MPI_DOUBLE, receive.data(), tile, MPI_DOUBLE, comm.get());
    else
      MPI_Alltoall(send.data(), tile / R, MPI_DOUBLE, receive.data(), tile / R, MPI_DOUBLE, comm.get());
  };
  std::vector<double> times;
  for (int r = 0; r <= reps; ++r) {
    MPI_Barrier(comm.get());
    const auto start = std::chrono::steady_clock::now();
    call();
    const double t = slowest(comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r > 0) times.push_back(t);  // the first call sets MPI up
  }
  const double received = c.name == "replicate" ? (whole - tile) * 8.0 : (tile - tile / R) * 8.0;
  return {median(times), received};
}

void report(const Communicator& comm, const Case& c, int reps) {
  std::vector<double> p2p_times, auto_times, p2p_moving, auto_moving;
  Prepared p2p(comm, c, engine::TransitionPolicy::point_to_point),
      automatic(comm, c, engine::TransitionPolicy::automatic);
  p2p.run(comm, c), automatic.run(comm, c);  // warm-up
  for (int r = 0; r < reps; ++r) {
    const auto [tp, mp] = p2p.run(comm, c);
    const auto [ta, ma] = automatic.run(comm, c);
    p2p_times.push_back(tp), p2p_moving.push_back(mp);
    auto_times.push_back(ta), auto_moving.push_back(ma);
  }
  const auto [peer, peer_bytes] = mpi_peer(comm, c, reps);
  if (comm.rank() != 0) return;
  auto figures = [&](const engine::Schedule& s) {
    const engine::Traffic dry = engine::dry_run(c.graph, s);
    Extent moved = 0;
    for (Extent m : dry.floats_moved) moved += m;
    return std::make_pair(moved, *std::max_element(dry.peak_memory_bytes.begin(), dry.peak_memory_bytes.end()));
  };
  const auto [p2p_moved, p2p_peak] = figures(p2p.schedule);
  const auto [auto_moved, auto_peak] = figures(automatic.schedule);
  const double tp = median(p2p_times), ta = median(auto_times);
  std::cout << std::left << std::setw(11) << c.name << std::right << std::fixed << std::setprecision(4) << std::setw(9)
            << tp << std::setw(9) << ta << std::setprecision(2) << std::setw(7) << tp / ta << std::setw(12) << p2p_moved
            << std::setw(12) << auto_moved << std::setw(12) << p2p_peak << std::setw(12) << auto_peak << "  "
            << collectives_of(automatic.schedule) << "\n"
            << "           moving: p2p " << std::setprecision(4) << median(p2p_moving) << " s, auto "
            << median(auto_moving) << " s; MPI peer " << peer << " s (" << std::setprecision(2)
            << peer_bytes / peer / 1e9 << " GB/s received per rank), peer / auto " << peer / median(auto_moving)
            << "\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  Kokkos::initialize(argc, argv);
  {
    const bench::Options options(argc, argv, {"--mib", "--reps"}, "einrel_transition_bench [--mib M] [--reps N]");
    const Communicator comm(MPI_COMM_WORLD);
    const Extent elements = options.number("--mib", 32) * (1 << 20) / static_cast<Extent>(sizeof(double));
    if (comm.size() != 2 && comm.size() != 4) {
      if (comm.rank() == 0) std::cerr << "einrel_transition_bench runs on 2 or 4 ranks\n";
    } else {
      if (comm.rank() == 0)
        std::cout << "R = " << comm.size() << ", tiles of about " << options.number("--mib", 32)
                  << " MiB per rank; seconds: median of " << options.number("--reps", 7) << "\n"
                  << "case        p2p [s] auto [s] ratio  moved p2p  moved auto    peak p2p   peak auto  collectives\n";
      for (const Case& c : cases(comm.size(), elements)) report(comm, c, static_cast<int>(options.number("--reps", 7)));
    }
  }
  Kokkos::finalize();
  MPI_Finalize();
  return 0;
}
