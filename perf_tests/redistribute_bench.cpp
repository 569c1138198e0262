// Redistribution bandwidth against MPI's own collective moving the same bytes.
//
//   OMP_NUM_THREADS=1 mpiexec.mpich -n 2 build/perf_tests/einrel_redistribute_bench [--reps 7] [--sizes 1024,2048,4096]
//
// For an N x N f64 matrix going from row blocks to column blocks (both spread over the R ranks), each
// rank sends (R-1)/R of its N^2/R elements. einrel's exchange (plan made once, buffers reused, packing
// from and unpacking into strided blocks) is timed against two peers from MPI itself, alternating all
// three in one loop:
//  - alltoallw: MPI_Alltoallw with subarray datatypes, block to block, the same whole task done by MPI;
//  - alltoallv: MPI_Alltoallv of the same per-peer counts on contiguous, pre-filled buffers (no packing,
//    no local copy: a lower bound for moving those bytes).
// Times are the slowest rank's, medians over reps; ratio = peer time / einrel time (1.0 = as fast as the
// peer). Also einrel with a buffer cap of 1/8 of the rank's traffic (many rounds).
#include <einrel_DistributedTensorRelation.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace einrel;
using namespace einrel::redistribute;
using namespace einrel::redistribute::mesh;
using comm::Communicator;
using Space = Kokkos::DefaultExecutionSpace::memory_space;

double slowest(double t) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

template <class F>
double timed(F&& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  f();
  return slowest(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(Extent n, int reps, const Communicator& comm) {
  const int R = comm.size();
  const BlockLayout rows(BlockGrid({n, n}, {R, 1}), R), cols(BlockGrid({n, n}, {1, R}), R);
  Kokkos::DefaultExecutionSpace exec;
  const auto source = DistributedTensorRelation<double, Space>::allocate("A", comm, rows);
  for (const auto& [key, block] : source.local()) Kokkos::deep_copy(block.view(), 1.0 + key[0]);
  const auto target = DistributedTensorRelation<double, Space>::allocate("B", comm, cols);
  Exchange<Space> exchange(comm);
  const RedistributionPlan plan(rows, cols, comm.rank(), sizeof(double));
  const Extent traffic = plan.elements_sent() + plan.elements_received();
  const RedistributionPlan capped(rows, cols, comm.rank(), sizeof(double),
                                  {static_cast<std::size_t>(std::max<Extent>(traffic / 8, 2)) * sizeof(double)});

  // The peer: MPI_Alltoallv with the plan's per-peer counts on contiguous buffers.
  std::vector<int> send_counts(R, 0), recv_counts(R, 0), send_displs(R, 0), recv_displs(R, 0);
  for (const auto& s : plan.sends()) send_counts[s.peer] = static_cast<int>(s.elements);
  for (const auto& s : plan.receives()) recv_counts[s.peer] = static_cast<int>(s.elements);
  for (int r = 1; r < R; ++r) {
    send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
    recv_displs[r] = recv_displs[r - 1] + recv_counts[r - 1];
  }
  std::vector<double> send_buffer(plan.elements_sent() + 1, 1.0), recv_buffer(plan.elements_received() + 1, 0.0);

  // The whole-task peer: subarrays of the row block (local_rows x n) to subarrays of the column block
  // (n x local_cols).
  const BlockGrid &row_grid = rows.grid(), &col_grid = cols.grid();
  const Extent my_rows = row_grid.extent(0, comm.rank()), my_cols = col_grid.extent(1, comm.rank());
  std::vector<MPI_Datatype> send_types(R), recv_types(R);
  std::vector<int> ones(R, 1), zeros(R, 0);
  for (int q = 0; q < R; ++q) {
    const int block_a[2] = {static_cast<int>(my_rows), static_cast<int>(n)};
    const int sub_a[2] = {static_cast<int>(my_rows), static_cast<int>(col_grid.extent(1, q))};
    const int at_a[2] = {0, static_cast<int>(col_grid.offset(1, q))};
    MPI_Type_create_subarray(2, block_a, sub_a, at_a, MPI_ORDER_C, MPI_DOUBLE, &send_types[q]);
    const int block_b[2] = {static_cast<int>(n), static_cast<int>(my_cols)};
    const int sub_b[2] = {static_cast<int>(row_grid.extent(0, q)), static_cast<int>(my_cols)};
    const int at_b[2] = {static_cast<int>(row_grid.offset(0, q)), 0};
    MPI_Type_create_subarray(2, block_b, sub_b, at_b, MPI_ORDER_C, MPI_DOUBLE, &recv_types[q]);
    MPI_Type_commit(&send_types[q]);
    MPI_Type_commit(&recv_types[q]);
  }
  const double* a_block = source.local().begin()->second.view().data();
  double* b_block = target.local().begin()->second.view().data();

  std::vector<double> t_w, t_mpi, t_einrel, t_capped;
  for (int r = -1; r < reps; ++r) {  // r = -1 warms up every side
    const double w = timed([&] {
      MPI_Alltoallw(a_block, ones.data(), zeros.data(), send_types.data(), b_block, ones.data(), zeros.data(),
                    recv_types.data(), MPI_COMM_WORLD);
    });
    const double a = timed([&] {
      MPI_Alltoallv(send_buffer.data(), send_counts.data(), send_displs.data(), MPI_DOUBLE, recv_buffer.data(),
                    recv_counts.data(), recv_displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
    });
    const double b = timed([&] { exchange.execute(exec, plan, source.local(), target.local()); });
    const double c = timed([&] { exchange.execute(exec, capped, source.local(), target.local()); });
    if (r >= 0) t_w.push_back(w), t_mpi.push_back(a), t_einrel.push_back(b), t_capped.push_back(c);
  }
  for (int q = 0; q < R; ++q) MPI_Type_free(&send_types[q]), MPI_Type_free(&recv_types[q]);
  const double gb = static_cast<double>(plan.elements_sent()) * sizeof(double) / 1e9;
  if (comm.rank() == 0)
    std::printf(
        "%6lld^2 f64 R=%d sent/rank %6.1f MB | einrel %.4f s | alltoallw %.4f s ratio %.2f | "
        "alltoallv (no packing) %.4f s ratio %.2f | einrel capped, %zu rounds %.4f s, alltoallw ratio %.2f\n",
        static_cast<long long>(n), R, gb * 1e3, median(t_einrel), median(t_w), median(t_w) / median(t_einrel),
        median(t_mpi), median(t_mpi) / median(t_einrel), capped.rounds().size(), median(t_capped),
        median(t_w) / median(t_capped));
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  Kokkos::initialize(argc, argv);
  {
    int reps = 7;
    std::vector<Extent> sizes{1024, 2048, 4096};
    for (int i = 1; i + 1 < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--reps") reps = std::atoi(argv[++i]);
      if (arg == "--sizes") {
        sizes.clear();
        std::stringstream list(argv[++i]);
        for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::stoll(item));
      }
    }
    const Communicator comm(MPI_COMM_WORLD);
    for (Extent n : sizes) run(n, reps, comm);
  }
  Kokkos::finalize();
  MPI_Finalize();
  return 0;
}
