#include <einrel_Error.hpp>
#include <einrel_ProcessMesh.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <thread>

namespace einrel::redistribute::mesh {

namespace {

comm::Communicator cartesian(const comm::Communicator& comm, const DeviceMesh& primes) {
  if (comm.size() != primes.size())
    throw Error("a mesh of " + std::to_string(primes.size()) + " devices needs as many ranks, the communicator has " +
                std::to_string(comm.size()));
  std::vector<int> dims, periods;
  for (std::size_t a = primes.axes().size(); a-- > 0;) {
    dims.push_back(primes.axes()[a].size);
    periods.push_back(0);
  }
  if (dims.empty()) {  // a mesh of one device
    dims.push_back(1);
    periods.push_back(0);
  }
  MPI_Comm cart = MPI_COMM_NULL;
  comm::check_mpi(MPI_Cart_create(comm.get(), static_cast<int>(dims.size()), dims.data(), periods.data(), 0, &cart),
                  "MPI_Cart_create");
  return comm::Communicator::adopt(cart);
}

// Collective over comm: whether some node runs more ranks × host threads than it has hardware threads.
bool oversubscribed(const comm::Communicator& comm) {
  MPI_Comm node = MPI_COMM_NULL;
  comm::check_mpi(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node),
                  "MPI_Comm_split_type");
  const comm::Communicator on_node = comm::Communicator::adopt(node);
  const long threads = static_cast<long>(on_node.size()) * Kokkos::DefaultHostExecutionSpace().concurrency();
  int mine = threads > static_cast<long>(std::thread::hardware_concurrency()) ? 1 : 0, any = 0;
  comm::check_mpi(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, comm.get()), "MPI_Allreduce");
  return any != 0;
}

}  // namespace

ProcessMesh::ProcessMesh(const comm::Communicator& comm, DeviceMesh mesh)
    : mesh_(std::move(mesh)),
      primes_(mesh_.prime_factored()),
      cart_(cartesian(comm, primes_)),
      blocking_reductions_(!oversubscribed(cart_)) {}

const MeshGroup& ProcessMesh::group(const MeshState& state, const std::vector<std::string>& axes) {
  // Every rank's group and position: the same on every rank, so every rank takes the same branch below.
  std::vector<int> key;
  for (int r = 0; r < state.ranks(); ++r) {
    key.push_back(state.group_id(r, axes));
    key.push_back(state.position(r, axes));
  }
  const auto found = groups_.find(key);
  if (found != groups_.end()) return found->second;

  const int me = cart_.rank();
  bool cartesian_groups = true;  // the other axes' coordinates are the ranks' own
  const MeshState identity(primes_, state.type());
  for (int r = 0; r < state.ranks() && cartesian_groups; ++r)
    for (const MeshAxis& a : primes_.axes())
      if (std::find(axes.begin(), axes.end(), a.name) == axes.end() &&
          state.position(r, {a.name}) != identity.position(r, {a.name}))
        cartesian_groups = false;
  MPI_Comm sub = MPI_COMM_NULL;
  if (cartesian_groups && !primes_.axes().empty()) {
    std::vector<int> remain;
    for (std::size_t a = primes_.axes().size(); a-- > 0;)
      remain.push_back(std::find(axes.begin(), axes.end(), primes_.axes()[a].name) != axes.end());
    comm::check_mpi(MPI_Cart_sub(cart_.get(), remain.data(), &sub), "MPI_Cart_sub");
  } else {
    comm::check_mpi(MPI_Comm_split(cart_.get(), key[2 * me], key[2 * me + 1], &sub), "MPI_Comm_split");
  }
  MeshGroup g{comm::Communicator::adopt(sub), {}, {}};
  const std::vector<int> members = state.group(me, axes);  // by position
  g.position_of.assign(members.size(), 0);
  g.rank_at.assign(members.size(), 0);
  std::vector<int> world(members.size());
  std::vector<int> local(members.size());
  for (std::size_t k = 0; k < members.size(); ++k) local[k] = static_cast<int>(k);
  MPI_Group cart_group, sub_group;
  comm::check_mpi(MPI_Comm_group(cart_.get(), &cart_group), "MPI_Comm_group");
  comm::check_mpi(MPI_Comm_group(g.comm.get(), &sub_group), "MPI_Comm_group");
  // the cart rank of each sub-communicator rank
  const int rc =
      MPI_Group_translate_ranks(sub_group, static_cast<int>(members.size()), local.data(), cart_group, world.data());
  MPI_Group_free(&cart_group);
  MPI_Group_free(&sub_group);
  comm::check_mpi(rc, "MPI_Group_translate_ranks");
  for (std::size_t k = 0; k < members.size(); ++k) {
    const auto at = std::find(members.begin(), members.end(), world[k]);
    if (at == members.end()) throw Error("einrel::redistribute: a group communicator with a rank of another group");
    const int position = static_cast<int>(at - members.begin());
    g.position_of[k] = position;
    g.rank_at[position] = static_cast<int>(k);
  }
  return groups_.emplace(key, std::move(g)).first->second;
}

}  // namespace einrel::redistribute::mesh
