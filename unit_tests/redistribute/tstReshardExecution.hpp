// Synthesized redistributions, and the naive allgather-then-slice ones, run over MPI
// (redistribute::mesh::execute_reshard): on every mesh that the ranks
// factor into (1-3 axes), random pairs of distributed types, some with a pending sum or max over some axes;
// each rank fills its source tile with a function of the global index and checks every element of its
// target tile. Every rank draws the same cases from one seed.
#include <einrel_DistributedTensorRelation.hpp>
#include <einrel_Error.hpp>
#include <einrel_ReshardExecution.hpp>
#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <climits>
#include <random>
#include <string>

namespace {

using namespace einrel;
using namespace einrel::redistribute;
using namespace einrel::redistribute::mesh;
using comm::Communicator;

double value_at(Extent flat) { return static_cast<double>(flat % 1021) - 300.0; }

// The tile `rank` holds of `type`: value_at of each element's global C-order index; along pending axes the
// summand of position p is value·(p+1) (sum) or value + p (max).
template <class Scalar>
std::vector<Scalar> tile_values(const DistType& type, const DeviceMesh& mesh, int rank) {
  const std::vector<int> coords = mesh.coordinates(rank);
  int p = 0, stride = 1;
  for (const std::string& a : type.partial) {
    p += stride * coords[*mesh.find(a)];
    stride *= mesh.axis_size(a);
  }
  std::vector<Scalar> values;
  for_each_tile_element(type, mesh, coords, [&](Extent flat) {
    const double v = value_at(flat);
    values.push_back(static_cast<Scalar>(type.partial.empty()            ? v
                                         : type.partial_op == AggOp::sum ? v * (p + 1)
                                                                         : v + p));
  });
  return values;
}

// The combined array of a source with a pending reduction over `parts` summands.
double settled(double v, AggOp op, int parts) { return op == AggOp::sum ? v * parts * (parts + 1) / 2 : v + parts - 1; }

// `largest`: the most elements of one MPI call per member (execute_reshard's max_message_elements).
template <class Scalar>
void check_random_reshards(int cases_per_mesh, bool partial, Extent largest = INT_MAX) {
  const Communicator comm(MPI_COMM_WORLD);
  std::mt19937 rng(1234 + comm.size());
  for (const DeviceMesh& mesh : meshes_of(comm.size())) {
    ProcessMesh process_mesh(comm, mesh);
    for (int c = 0; c < cases_per_mesh; ++c) {
      const int rank = 1 + static_cast<int>(rng() % 3);
      std::vector<Extent> global;
      for (int d = 0; d < rank; ++d) global.push_back(mesh.size() * static_cast<Extent>(1 + rng() % 3));
      auto random_type = [&](bool with_partial) {
        DistType t;
        for (Extent g : global) t.dims.push_back({g, {}});
        for (const MeshAxis& a : mesh.axes()) {
          const int d = static_cast<int>(rng() % (rank + 2));
          if (d == rank + 1 && with_partial) {
            t.partial.push_back(a.name);
            continue;
          }
          if (d >= rank) continue;
          auto& list = t.dims[d].axes;
          list.insert(list.begin() + static_cast<std::ptrdiff_t>(rng() % (list.size() + 1)), a.name);
        }
        t.partial_op = rng() % 2 ? AggOp::sum : AggOp::max;
        return t;
      };
      const DistType from = random_type(partial), to = random_type(false);
      const ReshardPlan plan = synthesize_reshard(mesh, from, to);
      SCOPED_TRACE(mesh.str() + ": " + str(from, mesh) + " -> " + str(to, mesh));
      const auto source = tensor_from_host<TEST_MEMSPACE>("source", local_shape(from, mesh),
                                                          tile_values<Scalar>(from, mesh, comm.rank()));
      std::vector<Scalar> want = tile_values<Scalar>(to, mesh, comm.rank());
      int parts = 1;
      for (const std::string& a : from.partial) parts *= mesh.axis_size(a);
      if (parts > 1)
        for (Scalar& v : want) v = static_cast<Scalar>(settled(v, from.partial_op, parts));
      // the synthesized sequence, and the naive one it is measured against
      for (const ReshardPlan& p : {plan, naive_reshard(mesh, from, to)}) {
        const auto target = execute_reshard(TEST_EXECSPACE{}, process_mesh, p, source, {}, largest);
        ASSERT_EQ(target.bound(), local_shape(to, mesh));
        EXPECT_EQ(tensor_to_host(target), want);
      }
      EXPECT_EQ(tensor_to_host(source), tile_values<Scalar>(from, mesh, comm.rank()));  // only read
      if (from.partial.empty()) {  // the point-to-point redistribution between the types' block layouts agrees
        using DTR = DistributedTensorRelation<Scalar, TEST_MEMSPACE>;
        Relation<Scalar, TEST_MEMSPACE> local(static_cast<int>(global.size()));
        local.insert(tile_key(from, mesh, comm.rank()), source);
        const DTR before(comm, block_layout(from, mesh), std::move(local));
        Exchange<TEST_MEMSPACE> exchange(comm);
        const DTR after = redistribute::redistribute(TEST_EXECSPACE{}, exchange, before, block_layout(to, mesh));
        ASSERT_EQ(after.local().size(), 1u);
        EXPECT_EQ(tensor_to_host(after.block(tile_key(to, mesh, comm.rank()))), want);
      }
    }
  }
}

TEST(TEST_CATEGORY, ReshardRandomTypesOnEveryMesh) { check_random_reshards<double>(12, false); }

// A failure on one rank at any step of a sequence (allgather then dynslice, so also after a step's MPI call
// ran) is the same Error on every rank, and the communicators stay usable: the same plan then runs.
TEST(TEST_CATEGORY, AFailedStepIsEveryRanksError) {
  const Communicator comm(MPI_COMM_WORLD);
  const int R = comm.size();
  const std::string n = std::to_string(2 * R);
  const DeviceMesh mesh = DeviceMesh::parse("x=" + std::to_string(R));
  const DistType from = parse_dist_type("[2{x}" + n + "," + n + "]", mesh, "from");
  const DistType to = parse_dist_type("[" + n + ",2{x}" + n + "]", mesh, "to");
  const ReshardPlan plan = naive_reshard(mesh, from, to);
  ASSERT_EQ(plan.steps.size(), R > 1 ? 2u : 0u);
  ProcessMesh process_mesh(comm, mesh);
  const auto source =
      tensor_from_host<TEST_MEMSPACE>("source", local_shape(from, mesh), tile_values<double>(from, mesh, comm.rank()));
  for (std::size_t failing = 0; failing < plan.steps.size(); ++failing) {
    const std::string message = test::error_of([&] {
      execute_reshard(TEST_EXECSPACE{}, process_mesh, plan, source, [&](std::size_t step) {
        if (step == failing && comm.rank() == R - 1) throw Error("failed at step " + std::to_string(step));
      });
    });
    EXPECT_EQ(message, "failed at step " + std::to_string(failing));
  }
  EXPECT_EQ(tensor_to_host(execute_reshard(TEST_EXECSPACE{}, process_mesh, plan, source)),
            tile_values<double>(to, mesh, comm.rank()));
}
TEST(TEST_CATEGORY, ReshardSettlesPendingReductions) { check_random_reshards<float>(8, true); }

// Issue 63: with the largest MPI call lowered to 1, 3 and 5 elements per member, every step of a sequence (and of
// the naive one) is split into several calls, as a tile past 2^31 elements would be: the same tiles arrive.
TEST(TEST_CATEGORY, ReshardSplitsCallsPastTheLargestMessage) {
  for (Extent largest : {1, 3, 5}) {
    SCOPED_TRACE("largest MPI call: " + std::to_string(largest) + " elements");
    check_random_reshards<double>(4, true, largest);
  }
  const Communicator comm(MPI_COMM_WORLD);
  const DeviceMesh mesh = DeviceMesh::parse("x=" + std::to_string(comm.size()));
  ProcessMesh process_mesh(comm, mesh);
  const std::string n = std::to_string(2 * comm.size());
  const DistType type = parse_dist_type("[2{x}" + n + "," + n + "]", mesh, "type");
  const auto tile =
      tensor_from_host<TEST_MEMSPACE>("tile", local_shape(type, mesh), tile_values<double>(type, mesh, comm.rank()));
  for (Extent bad : {Extent{0}, Extent{INT_MAX} + 1})
    EXPECT_THROW(execute_reshard(TEST_EXECSPACE{}, process_mesh, synthesize_reshard(mesh, type, type), tile, {}, bad),
                 Error);
}

}  // namespace
