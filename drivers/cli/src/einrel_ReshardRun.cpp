#include <einrel_DistributedTensorRelation.hpp>
#include <einrel_ReshardExecution.hpp>
#include <einrel_ReshardRun.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>

namespace einrel::cli {

namespace {

using namespace redistribute;
using namespace redistribute::mesh;
using comm::check_mpi;
using comm::Communicator;
using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;

// Exact in f32 for what the checks combine (up to 2^20 devices of summands of integers below 2^11).
double value_at(Extent flat) { return static_cast<double>(flat % 2039) - 1000.0; }

// The elements of the tile `rank` holds of `type`: as the source fills them when `type` has the pending
// reduction of `summands`, the combined array where it has none (the target of a source with summands).
template <class Scalar>
std::vector<Scalar> tile_values(const DistType& type, const DeviceMesh& mesh, int rank, const DistType& summands) {
  const std::vector<int> coords = mesh.coordinates(rank);
  int p = 0, parts = 1;  // this rank's summand, of how many
  for (const std::string& a : summands.partial) {
    p += parts * coords[*mesh.find(a)];
    parts *= mesh.axis_size(a);
  }
  const bool combined = type.partial.empty() && parts > 1;  // the target of a source with summands
  std::vector<Scalar> values;
  values.reserve(static_cast<std::size_t>(local_size(type, mesh)));
  for_each_tile_element(type, mesh, coords, [&](Extent flat) {
    const double v = value_at(flat);
    double out = v;
    switch (summands.partial_op) {
      case AggOp::sum:
        out = combined ? v * parts * (parts + 1) / 2 : v * (p + 1);
        break;
      case AggOp::max:
        out = combined ? v + parts - 1 : v + p;
        break;
      case AggOp::min:
        out = combined ? v : v + p;
        break;
      case AggOp::prod:
        out = combined || p == 0 ? v : 1;
        break;
    }
    values.push_back(static_cast<Scalar>(parts > 1 ? out : v));
  });
  return values;
}

template <class F>
double seconds_on_slowest(const Communicator& comm, F&& f) {
  check_mpi(MPI_Barrier(comm.get()), "MPI_Barrier");
  const auto start = std::chrono::steady_clock::now();
  f();
  const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double slowest = 0;
  check_mpi(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  return slowest;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Scalar>
ReshardRun run(const Communicator& comm, const ReshardPlan& plan, int repetitions) {
  using Tile = Tensor<Scalar, Memory>;
  const DeviceMesh& mesh = plan.mesh;
  const int me = comm.rank();
  ProcessMesh process_mesh(comm, mesh);
  const ReshardPlan naive = naive_reshard(mesh, plan.from, plan.to);
  const Tile source = tensor_from_host<Memory>("einrel::reshard/source", local_shape(plan.from, mesh),
                                               tile_values<Scalar>(plan.from, mesh, me, plan.from));
  const std::vector<Scalar> want = tile_values<Scalar>(plan.to, mesh, me, plan.from);
  auto wrong = [&](const Tile& t) {
    long long n = 0;
    const std::vector<Scalar> got = tensor_to_host(t);
    if (got.size() != want.size()) n = static_cast<long long>(want.size());
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) n += got[i] != want[i];
    long long all = 0;
    check_mpi(MPI_Allreduce(&n, &all, 1, MPI_LONG_LONG, MPI_SUM, comm.get()), "MPI_Allreduce");
    return static_cast<Extent>(all);
  };
  ReshardRun out;
  out.repetitions = repetitions;
  std::vector<double> synthesized, gathered, point_to_point;
  Tile result;
  auto run_plan = [&](const ReshardPlan& p) { result = execute_reshard(Exec{}, process_mesh, p, source); };
  for (int r = 0; r < repetitions; ++r) {
    synthesized.push_back(seconds_on_slowest(comm, [&] { run_plan(plan); }));
    if (r == 0) out.wrong_synthesized = wrong(result);
    gathered.push_back(seconds_on_slowest(comm, [&] { run_plan(naive); }));
    if (r == 0) out.wrong_naive = wrong(result);
  }
  out.synthesized_seconds = median(synthesized);
  out.naive_seconds = median(gathered);
  if (plan.from.partial.empty()) {
    using DTR = DistributedTensorRelation<Scalar, Memory>;
    Relation<Scalar, Memory> local(static_cast<int>(plan.from.dims.size()));
    local.insert(tile_key(plan.from, mesh, me), source);
    const DTR before(process_mesh.comm(), block_layout(plan.from, mesh), std::move(local));
    const BlockLayout target = block_layout(plan.to, mesh);
    Exchange<Memory> exchange(process_mesh.comm());
    for (int r = 0; r < repetitions; ++r) {
      std::optional<DTR> after;
      point_to_point.push_back(seconds_on_slowest(
          comm, [&] { after.emplace(redistribute::redistribute(Exec{}, exchange, before, target)); }));
      if (r == 0) out.wrong_point_to_point = wrong(after->block(tile_key(plan.to, mesh, me)));
    }
    out.point_to_point_seconds = median(point_to_point);
  }
  return out;
}

}  // namespace

ReshardRun measure_reshard(const Communicator& comm, const ReshardPlan& plan, Dtype dtype, int repetitions) {
  if (comm.size() != plan.mesh.size())
    throw Error("--execute on the mesh " + plan.mesh.str() + " needs " + std::to_string(plan.mesh.size()) +
                " ranks (mpiexec.mpich -n " + std::to_string(plan.mesh.size()) + "), not " +
                std::to_string(comm.size()));
  if (repetitions < 1) throw Error("--execute needs at least one repetition");
  return dispatch_dtype(dtype, [&](auto scalar) { return run<decltype(scalar)>(comm, plan, repetitions); });
}

}  // namespace einrel::cli
