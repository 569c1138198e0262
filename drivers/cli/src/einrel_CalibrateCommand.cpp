#include <einrel_AtomicFile.hpp>
#include <einrel_CalibrateCommand.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_EinsumKernel.hpp>
#include <einrel_Error.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_MachineFile.hpp>
#include <einrel_ParallelHdf5.hpp>
#include <einrel_Wait.hpp>

#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

namespace einrel::cli {
namespace {

using comm::Communicator;
using Exec = Kokkos::DefaultExecutionSpace;
using Block = Tensor<double, Exec::memory_space>;

// The slowest rank's median of `reps` timings of f (each started together on every rank). Collective.
double slowest_median(const Communicator& comm, int reps, const std::function<void()>& f) {
  std::vector<double> times;
  for (int k = 0; k < reps; ++k) {
    MPI_Barrier(comm.get());
    const double start = MPI_Wtime();
    f();
    times.push_back(MPI_Wtime() - start);
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  double mine = times[static_cast<std::size_t>(reps / 2)], slowest = 0;
  comm::check_mpi(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  return slowest;
}

// One round trip per call between this rank and `partner`, `n` doubles each way; a rank without a
// partner (-1) waits. Partners are mutual.
void round_trip(const Communicator& comm, int partner, std::vector<double>& buffer, int trips) {
  if (partner < 0) return;
  const int n = static_cast<int>(buffer.size());
  for (int t = 0; t < trips; ++t) {
    if (comm.rank() < partner) {
      comm::check_mpi(MPI_Send(buffer.data(), n, MPI_DOUBLE, partner, 0, comm.get()), "MPI_Send");
      comm::check_mpi(MPI_Recv(buffer.data(), n, MPI_DOUBLE, partner, 0, comm.get(), MPI_STATUS_IGNORE), "MPI_Recv");
    } else {
      comm::check_mpi(MPI_Recv(buffer.data(), n, MPI_DOUBLE, partner, 0, comm.get(), MPI_STATUS_IGNORE), "MPI_Recv");
      comm::check_mpi(MPI_Send(buffer.data(), n, MPI_DOUBLE, partner, 0, comm.get()), "MPI_Send");
    }
  }
}

// The latency and seconds per byte of a ping-pong between every rank and its `partner` at once.
std::pair<double, double> ping_pong(const Communicator& comm, int partner, int reps) {
  constexpr int small_trips = 200, large_trips = 8;
  std::vector<double> small(1), large(std::size_t{1} << 19);  // 8 B and 4 MiB
  const double latency =
      slowest_median(comm, reps, [&] { round_trip(comm, partner, small, small_trips); }) / (2 * small_trips);
  const double big =
      slowest_median(comm, reps, [&] { round_trip(comm, partner, large, large_trips); }) / (2 * large_trips);
  return {latency, std::max(big - latency, 1e-12) / static_cast<double>(large.size() * sizeof(double))};
}

// Both levels where the ranks span several nodes of several ranks each (docs/planner.md "Nodes"), else one:
// within a node, a rank pairs with its neighbour on the node; between nodes, with its place on the next
// (or previous) node.
void measure_network(const Communicator& comm, int reps, int ranks_per_node, engine::MachineModel& machine) {
  const int R = comm.size(), me = comm.rank();
  const int n = ranks_per_node > 0 ? std::min(ranks_per_node, R) : 0;
  const bool within = n > 1, between = n > 0 && R > n;
  auto exists = [&](int r) { return r >= 0 && r < R ? r : -1; };
  if (within) {
    const int mate = me / n * n + (me % n ^ 1);
    std::tie(machine.node_latency_seconds, machine.node_seconds_per_byte) =
        ping_pong(comm, mate / n == me / n ? exists(mate) : -1, reps);
  }
  if (between) {
    const int node = me / n, other = node % 2 == 0 ? node + 1 : node - 1;
    std::tie(machine.latency_seconds, machine.seconds_per_byte) = ping_pong(comm, exists(other * n + me % n), reps);
  }
  if (!between) {  // one node of all ranks, or nodes unknown: one level, rank pairs 0-1, 2-3, ...
    if (!within)
      std::tie(machine.node_latency_seconds, machine.node_seconds_per_byte) = ping_pong(comm, exists(me ^ 1), reps);
    machine.latency_seconds = machine.node_latency_seconds, machine.seconds_per_byte = machine.node_seconds_per_byte;
  } else if (!within) {  // one rank a node
    machine.node_latency_seconds = machine.latency_seconds, machine.node_seconds_per_byte = machine.seconds_per_byte;
  }
  machine.ranks_per_node = n;
}

Block filled(const std::string& label, const Bound& bound, double value) {
  Block b = Block::uninitialized(label, bound);
  Kokkos::deep_copy(b.view(), value);
  return b;
}

// The slowest rank's median flop rate of einrel's kernel on `calls` n-cube f64 products.
double cube_rate(const Communicator& comm, int reps, Extent n, int calls) {
  const Block a = filled("calibrate/a", {n, n}, 0.5), b = filled("calibrate/b", {n, n}, 0.25);
  const Block c = filled("calibrate/c", {n, n}, 0.0);
  const EinSum product = EinSum::parse("ij,jk->ik", 2);
  const double seconds = slowest_median(comm, reps, [&] {
    for (int call = 0; call < calls; ++call) kernels::einsum(Exec{}, product, a, std::optional<Block>(b), c);
    compat::fence(Exec{}, "einrel calibrate: product");
  });
  return 2.0 * static_cast<double>(n * n * n) * calls / seconds;
}

void measure_kernels(const Communicator& comm, int reps, engine::MachineModel& machine) {
  // Two cube sizes give the rate on large blocks F and the dimension d0 at which a call runs at half of it,
  // from rate(n) = F n / (n + d0).
  constexpr double large = 768, small = 192;
  const double large_rate = cube_rate(comm, reps, Extent(large), 1),
               small_rate = cube_rate(comm, reps, Extent(small), 32);
  const double q = large_rate / small_rate, ratio = large / small;
  // (beyond 4·large: small calls are slower than the model can say)
  machine.gemm_half_rate_dimension = q <= 1       ? 0
                                     : q >= ratio ? 4 * large
                                                  : std::min(large * (q - 1) / (ratio - q), 4 * large);
  machine.flops_per_second = large_rate * (large + machine.gemm_half_rate_dimension) / large;

  // The cost of a call itself: many calls on 4-cubes, resolved as the engine resolves each, less their flops.
  constexpr Extent tiny = 4;
  constexpr int tiny_calls = 2000;
  const Block ta = filled("calibrate/ta", {tiny, tiny}, 0.5), tb = filled("calibrate/tb", {tiny, tiny}, 0.25);
  const Block tc = filled("calibrate/tc", {tiny, tiny}, 0.0);
  const EinSum product = EinSum::parse("ij,jk->ik", 2);
  const double calls = slowest_median(comm, reps, [&] {
    for (int call = 0; call < tiny_calls; ++call)
      kernels::einsum(Exec{}, resolve(product, {ta.bound(), tb.bound()}), ta, std::optional<Block>(tb), tc);
    compat::fence(Exec{}, "einrel calibrate: calls");
  });
  const double flops = 2.0 * static_cast<double>(tiny * tiny * tiny) / machine.flops_per_second;
  machine.call_seconds = std::max(calls / tiny_calls - flops, 0.0);

  const Extent m = Extent{1} << 22;
  const Block x = filled("calibrate/x", {m}, 1.0), y = filled("calibrate/y", {m}, 2.0),
              z = filled("calibrate/z", {m}, 0);
  EinSum sum = EinSum::parse("i,i->i", 2);
  sum.join = JoinOp::add;
  const double stream = slowest_median(comm, reps, [&] {
    kernels::einsum(Exec{}, sum, x, std::optional<Block>(y), z);
    compat::fence(Exec{}, "einrel calibrate: sum");
  });
  machine.memory_bytes_per_second = 3.0 * static_cast<double>(m * sizeof(double)) / stream;
}

// A scratch HDF5 file in `dir`, named from rank 0's process id, removed when this goes.
class ScratchFile {
 public:
  ScratchFile(const Communicator& comm, const std::string& dir) {
    long long pid = static_cast<long long>(getpid());
    comm::check_mpi(MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, comm.get()), "MPI_Bcast");
    path_ = (std::filesystem::path(dir) / ("einrel-calibrate-" + std::to_string(pid) + ".h5")).string();
    root_ = comm.rank() == 0;
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() {
    if (root_) std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool root_ = false;
};

void measure_file(const Communicator& comm, int reps, const std::string& dir, engine::MachineModel& machine) {
  const Extent per_rank = Extent{1} << 22;  // 32 MiB of doubles
  const Bound bound{static_cast<Extent>(comm.size()), per_rank};
  const Box mine{{static_cast<Extent>(comm.rank()), 0}, {static_cast<Extent>(comm.rank()) + 1, per_rank}};
  std::vector<double> data(static_cast<std::size_t>(per_rank), 1.0);
  const ScratchFile file(comm, dir);
  io::write_boxes(comm, file.path(), {{"x", Dtype::f64, bound, {{mine, data.data()}}}});
  io::InputFiles files(comm);
  const double read = slowest_median(comm, reps, [&] {
    files.read({file.path(), "/x"}, Dtype::f64, bound, {{mine, data.data()}});
  });
  machine.file_seconds_per_byte = read / static_cast<double>(per_rank * sizeof(double));
}

}  // namespace

void calibrate(MPI_Comm user_comm, const CalibrateOptions& options, std::ostream& out) {
  const Communicator comm(user_comm);
  engine::MachineModel machine;
  if (comm.size() > 1)
    measure_network(comm, options.reps,
                    options.ranks_per_node > 0 ? options.ranks_per_node : comm::ranks_per_node(comm), machine);
  measure_kernels(comm, options.reps, machine);
  const std::string dir =
      options.output ? std::filesystem::absolute(*options.output).parent_path().string() : std::string(".");
  measure_file(comm, options.reps, dir, machine);

  io::JsonWriter j = io::json_report();
  j.member("num_ranks", comm.size());
  write_machine(j, machine);
  const std::string text = j.end_object().str();
  comm::collectively(comm, [&] {
    if (comm.rank() != 0) return;
    if (options.output) {
      io::AtomicFile file(*options.output);
      file.write_text(text);
      file.commit();
    }
  });
  if (comm.rank() != 0) return;
  std::ostringstream s;
  s << "einrel calibrate on " << comm.size() << " rank(s), the slowest rank's median of " << options.reps << ":\n";
  if (machine.two_rates())
    s << "  MPI latency " << machine.node_latency_seconds * 1e6 << " us, bandwidth "
      << 1e-9 / machine.node_seconds_per_byte << " GB/s within a node of " << machine.ranks_per_node << " ranks; "
      << machine.latency_seconds * 1e6 << " us, " << 1e-9 / machine.seconds_per_byte
      << " GB/s between nodes (ping-pong between rank pairs)\n";
  else if (comm.size() > 1)
    s << "  MPI latency " << machine.latency_seconds * 1e6 << " us, bandwidth " << 1e-9 / machine.seconds_per_byte
      << " GB/s (ping-pong between rank pairs)\n";
  else
    s << "  one rank: MPI latency and bandwidth keep their defaults (run under mpiexec with 2 or more ranks)\n";
  s << "  kernels " << machine.flops_per_second * 1e-9 << " GFLOP/s on large blocks, half of it at a smallest GEMM "
    << "dimension of " << machine.gemm_half_rate_dimension << " (768- and 192-cube f64 products), "
    << machine.call_seconds * 1e6 << " us per call besides its flops, memory " << machine.memory_bytes_per_second * 1e-9
    << " GB/s (element-wise sum)\n"
    << "  HDF5 read " << 1e-9 / machine.file_seconds_per_byte << " GB/s per rank\n";
  if (options.output)
    s << "wrote " << *options.output << " (use it with --machine)\n";
  else
    s << text;
  out << s.str();
}

}  // namespace einrel::cli
