#ifndef EINREL_PROCESSMESH_HPP
#define EINREL_PROCESSMESH_HPP

#include <einrel_Communicator.hpp>
#include <einrel_MeshState.hpp>

#include <map>
#include <string>
#include <vector>

namespace einrel::redistribute::mesh {

// The communicator of one collective's group: its ranks and where each stands along the step's axes.
struct MeshGroup {
  comm::Communicator comm;
  std::vector<int> position_of;  // by rank in comm: the member's position along the axes
  std::vector<int> rank_at;      // by position: the member's rank in comm
};

// A DeviceMesh laid over the ranks of a communicator: rank r stands at mesh.coordinates(r). Owns an
// MPI_Cart_create communicator over the prime-factored mesh (reorder off, so ranks keep their numbers; MPI
// lists dimensions major first, the reverse of the mesh's axes) and the group communicators of the
// collectives run on it, made once and kept: MPI_Cart_sub over a step's axes while the device map leaves the
// other axes' coordinates as they were (the groups are then the Cartesian sub-grids), MPI_Comm_split by the
// groups of MeshState::group otherwise.
class ProcessMesh {
 public:
  // Collective over `comm`; throws Error unless comm has mesh.size() ranks.
  ProcessMesh(const comm::Communicator& comm, DeviceMesh mesh);

  const DeviceMesh& mesh() const { return mesh_; }
  const DeviceMesh& primes() const { return primes_; }
  const comm::Communicator& comm() const { return cart_; }
  // Whether the reductions (reducescatter, allreduce) call MPI's blocking collectives: when no node runs more
  // ranks × host threads than it has hardware threads (decided by all ranks together: blocking and
  // nonblocking collectives do not match). MPICH 4.0's MPI_Ireduce_scatter_block is far slower than the
  // blocking call at mid sizes (512 KiB on 2 ranks: 2.4 ms against 0.45 ms; 2 MiB: 12 ms), while on
  // oversubscribed cores a blocking call spins through the others' time slices (4 ranks on 2 cores, 512 KiB:
  // 24 ms against 8 ms with einrel's yielding waits).
  bool blocking_reductions() const { return blocking_reductions_; }

  // Collective over comm(): the group of this rank for a collective over `axes` in `state`.
  const MeshGroup& group(const MeshState& state, const std::vector<std::string>& axes);

 private:
  DeviceMesh mesh_, primes_;
  comm::Communicator cart_;
  bool blocking_reductions_ = false;
  std::map<std::vector<int>, MeshGroup> groups_;  // by (every rank's group id and position)
};

}  // namespace einrel::redistribute::mesh

#endif
