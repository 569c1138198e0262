// Redistribution by synthesized collectives (array-redistribution-collectives.txt) against the naive
// allgather-then-slice sequence (paper eq. 2) and einrel's point-to-point redistribution between the two
// types' block layouts, on random problems like the paper's §8: meshes of up to 3 axes over the ranks, tensors of
// up to 6 dimensions, each axis replicating or partitioning a random dimension; sizes scaled so that the
// smaller of the two tiles holds at least --tile-mib MiB. Per problem (CSV): the median seconds of --reps
// runs of each method (alternating; the slowest rank's time), the peak bytes each takes from the block
// pool on the busiest rank beyond the source tile (plus the exchange's buffers for point-to-point; measured
// in a separate run with the pool emptied first), the model costs (elements per device), the most
// elements a rank sends point-to-point, and the synthesis time. Then the geometric means of the time ratios.
//   mpiexec.mpich -n 4 build/perf_tests/einrel_reshard_bench --problems 20 --tile-mib 32
#include <einrel_BlockPool.hpp>
#include <einrel_DistributedTensorRelation.hpp>
#include <einrel_ReshardExecution.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace einrel;
using namespace einrel::redistribute;
using namespace einrel::redistribute::mesh;
using comm::Communicator;
using Memory = Kokkos::DefaultExecutionSpace::memory_space;
using Exec = Kokkos::DefaultExecutionSpace;
using Tile = Tensor<double, Memory>;
using DTR = DistributedTensorRelation<double, Memory>;

struct Problem {
  DeviceMesh mesh;
  DistType from, to;
};

Problem random_problem(std::mt19937& rng, int ranks, Extent tile_elements) {
  const std::vector<DeviceMesh> meshes = meshes_of(ranks);
  Problem p{meshes[rng() % meshes.size()], {}, {}};
  const int rank = 1 + static_cast<int>(rng() % 6);
  std::vector<Extent> global;
  for (int d = 0; d < rank; ++d) global.push_back(p.mesh.size() * static_cast<Extent>(1 + rng() % 4));
  auto random_type = [&] {
    DistType t;
    for (Extent g : global) t.dims.push_back({g, {}});
    for (const MeshAxis& a : p.mesh.axes()) {
      const int d = static_cast<int>(rng() % (rank + 1));
      if (d == rank) continue;
      auto& list = t.dims[d].axes;
      list.insert(list.begin() + static_cast<std::ptrdiff_t>(rng() % (list.size() + 1)), a.name);
    }
    return t;
  };
  p.from = random_type();
  do p.to = random_type();  // a redistribution that moves something
  while (p.to == p.from);
  for (;;) {  // grow a random dimension until the smaller tile is large enough
    const Extent smaller = std::min(local_size(p.from, p.mesh), local_size(p.to, p.mesh));
    if (smaller >= tile_elements) break;
    const std::size_t d = rng() % global.size();
    const Extent k = std::max<Extent>(2, (tile_elements + smaller - 1) / smaller);
    p.from.dims[d].global *= k;
    p.to.dims[d].global *= k;
  }
  return p;
}

double slowest(const Communicator& comm, double seconds) {
  double out = 0;
  MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_MAX, comm.get());
  return out;
}

template <class F>
double timed(const Communicator& comm, F&& f) {
  MPI_Barrier(comm.get());
  const auto start = std::chrono::steady_clock::now();
  f();
  return slowest(comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(const Communicator& comm, int problems, int reps, Extent tile_elements, unsigned seed) {
  std::mt19937 rng(seed);
  const int me = comm.rank();
  if (me == 0)
    std::cout << "ranks,mesh,from,to,synth_s,naive_s,p2p_s,naive_over_synth,p2p_over_synth,synth_peak_mib,"
                 "naive_peak_mib,p2p_peak_mib,synth_cost,naive_cost,p2p_max_sent,synthesis_ms\n";
  std::vector<double> vs_naive, vs_p2p;
  auto& pool = BlockPool<Memory>::instance();
  for (int k = 0; k < problems; ++k) {
    const Problem pb = random_problem(rng, comm.size(), tile_elements);
    const ReshardPlan plan = synthesize_reshard(pb.mesh, pb.from, pb.to);
    const ReshardPlan naive = naive_reshard(pb.mesh, pb.from, pb.to);
    ProcessMesh mesh(comm, pb.mesh);
    Exchange<Memory> exchange(comm);
    std::vector<double> values(static_cast<std::size_t>(local_size(pb.from, pb.mesh)));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>((i + me) % 977);
    const Tile source = tensor_from_host<Memory>("source", local_shape(pb.from, pb.mesh), values);
    Relation<double, Memory> local(static_cast<int>(pb.from.dims.size()));
    local.insert(tile_key(pb.from, pb.mesh, me), source);
    const DTR before(comm, block_layout(pb.from, pb.mesh), std::move(local));
    const BlockLayout target_layout = block_layout(pb.to, pb.mesh);
    ExchangeStats stats;
    auto synth = [&] { execute_reshard(Exec{}, mesh, plan, source); };
    auto gather = [&] { execute_reshard(Exec{}, mesh, naive, source); };
    auto p2p = [&] { redistribute::redistribute(Exec{}, exchange, before, target_layout, {}, &stats); };
    // peak memory beyond what is held before, each method from an emptied pool
    auto peak = [&](auto&& method, bool buffers) {
      exchange.release_buffers();
      pool.release_unused();
      pool.reset_statistics();
      const std::size_t held = pool.statistics().bytes_held;
      method();
      double bytes = static_cast<double>(pool.statistics().peak_bytes_held - held) +
                     (buffers ? static_cast<double>(exchange.buffer_capacity_bytes()) : 0.0);
      double most = 0;
      MPI_Allreduce(&bytes, &most, 1, MPI_DOUBLE, MPI_MAX, comm.get());
      return most / (1 << 20);
    };
    const double synth_mib = peak(synth, false), naive_mib = peak(gather, false), p2p_mib = peak(p2p, true);
    long long sent = static_cast<long long>(stats.elements_sent), max_sent = 0;
    MPI_Allreduce(&sent, &max_sent, 1, MPI_LONG_LONG, MPI_MAX, comm.get());
    std::vector<double> ts, tn, tp;
    for (int r = 0; r < reps; ++r) {  // alternating, warm pool and buffers
      ts.push_back(timed(comm, synth));
      tn.push_back(timed(comm, gather));
      tp.push_back(timed(comm, p2p));
    }
    const double s = median(ts), n = median(tn), p = median(tp);
    vs_naive.push_back(n / s);
    vs_p2p.push_back(p / s);
    if (me == 0)
      std::cout << comm.size() << ",\"" << pb.mesh.str() << "\",\"" << str(pb.from, pb.mesh) << "\",\""
                << str(pb.to, pb.mesh) << "\"," << s << "," << n << "," << p << "," << n / s << "," << p / s << ","
                << synth_mib << "," << naive_mib << "," << p2p_mib << "," << plan.cost << "," << naive.cost << ","
                << max_sent << "," << plan.synthesis_seconds * 1e3 << std::endl;
    pool.release_unused();
  }
  auto geomean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / static_cast<double>(v.size()));
  };
  if (me == 0)
    std::cout << "geomean naive/synth " << geomean(vs_naive) << ", p2p/synth " << geomean(vs_p2p) << " over "
              << problems << " problems\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  Kokkos::initialize(argc, argv);
  {
    int problems = 20, reps = 5;
    double tile_mib = 32;
    unsigned seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string arg = argv[i];
      if (arg == "--problems")
        problems = std::atoi(argv[i + 1]);
      else if (arg == "--reps")
        reps = std::atoi(argv[i + 1]);
      else if (arg == "--tile-mib")
        tile_mib = std::atof(argv[i + 1]);
      else if (arg == "--seed")
        seed = static_cast<unsigned>(std::atoi(argv[i + 1]));
    }
    const Communicator comm(MPI_COMM_WORLD);
    run(comm, problems, reps, static_cast<Extent>(tile_mib * (1 << 20) / sizeof(double)), seed);
  }
  Kokkos::finalize();
  MPI_Finalize();
  return 0;
}
