// The engine's operand transitions by synthesized collectives against its point-to-point exchange, end to end:
// graphs with explicit plans whose transitions the policies handle differently, each executed by
// engine::execute under the `point-to-point` and the `auto` policy (alternating, after engine::warm_memory; the
// slowest rank's time, median of --reps). Cases, with the tile a rank holds at about --mib MiB:
//   deferred   C = A·B with its inner label cut R ways (every rank a partial C), D = relu(C) cut over its rows
//              (and columns from R = 4): reduce on the owners + exchange, or one reduce-scatter sequence
//   replicate  S = tanh(B) cut by rows, C = A·S with A's rows cut: every rank needs all of S (an allgather)
//   transpose  S = tanh(B) cut by rows, T = -S cut by columns (an alltoall)
// Per case: the medians and their ratio (point-to-point / auto), floats moved (all ranks), the dry run's
// estimate of the busiest rank's peak memory under each policy, and the collectives `auto` chose.
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
using partition::PartitionVector;
using redistribute::Communicator;

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
  redistribute::Exchange<Memory> exchange;
  std::vector<std::optional<engine::AnyDistributed<Memory>>> inputs;

  Prepared(const Communicator& comm, const Case& c, engine::TransitionPolicy policy)
      : schedule(c.graph, c.plan, comm.size(), policy), exchange(comm), inputs(c.graph.size()) {
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
  double run(const Communicator& comm, const Case& c) {
    MPI_Barrier(comm.get());
    const auto start = std::chrono::steady_clock::now();
    engine::execute(Exec{}, exchange, c.graph, schedule, inputs);
    return slowest(comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
};

std::string collectives_of(const Case& c, const engine::Schedule& s) {
  std::string text;
  for (VertexId v = 0; v < c.graph.size(); ++v) {
    const Vertex& vertex = c.graph.vertex(v);
    for (std::size_t k = 0; k < vertex.inputs.size() && !vertex.is_input(); ++k)
      if (!s.shared_operand(v, k) && s.transition(v, k).path == engine::TransitionPath::collectives)
        text += (text.empty() ? "" : "; ") + redistribute::steps_text(*s.transition(v, k).plan);
  }
  return text.empty() ? "-" : text;
}

void report(const Communicator& comm, const Case& c, int reps) {
  std::vector<double> p2p_times, auto_times;
  Prepared p2p(comm, c, engine::TransitionPolicy::point_to_point),
      automatic(comm, c, engine::TransitionPolicy::automatic);
  p2p.run(comm, c), automatic.run(comm, c);  // warm-up
  for (int r = 0; r < reps; ++r) {
    p2p_times.push_back(p2p.run(comm, c));
    auto_times.push_back(automatic.run(comm, c));
  }
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
            << collectives_of(c, automatic.schedule) << "\n";
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
