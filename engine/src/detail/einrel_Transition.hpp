#ifndef EINREL_TRANSITION_HPP
#define EINREL_TRANSITION_HPP

#include <einrel_BlockLayout.hpp>
#include <einrel_MachineModel.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Reshard.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace einrel::engine {

// Which ways the engine may use: `automatic` takes the cheaper by the model; the others force one where it
// applies (collectives need both layouts to be distributed types on the ranks' mesh).
enum class TransitionPolicy { automatic, point_to_point, collectives };
std::string_view transition_policy_name(TransitionPolicy policy);  // "auto", "point-to-point", "collectives"
// Throws Error naming the accepted words.
TransitionPolicy parse_transition_policy(const std::string& text);

// How a consumer that reads a graph input in another layout than the input's own (its first reader's) gets
// its blocks (docs/engine.md "Input reads"): `move` them from that layout over the network, or read them
// `again` from the input's source (a file, the generator) where the model finds that cheaper. `again` needs
// the caller to pass execute() an InputReader.
enum class InputReads { move, again };
std::string_view input_reads_name(InputReads reads);  // "move", "again"
// Throws Error naming the accepted words.
InputReads parse_input_reads(const std::string& text);

enum class TransitionPath { point_to_point, collectives };
std::string_view transition_path_name(TransitionPath path);  // "point_to_point", "collectives"

// How one operand moves from its producer's layout to the sites of its join tuples: by the exchange
// (RedistributionPlan) or by the synthesized collectives (`plan`, on rank_mesh(R)). `volumes` are the chosen
// way's elements sent and received per rank; `seconds` the model's time for it.
// By collectives, what every rank's steps need of the sequence, found once for all vertices that move an
// operand between the same two layouts: the tile_weights of the target and the source type (collective_tiles),
// and `scratch`, the pool buffers the sequence takes as temporaries (reshard_scratch).
struct Transition {
  TransitionPath path = TransitionPath::point_to_point;
  std::optional<redistribute::mesh::ReshardPlan> plan;
  redistribute::ExchangeVolumes volumes;
  double seconds = 0;
  std::vector<Extent> to_tile_weights, from_tile_weights;
  std::vector<Extent> scratch;
};

// In a transition by collectives, `rank`'s tile as a block id of the target grid and of the source grid (the
// layouts' grids are the types', as_dist_type and as_partial_type make them). O(mesh axes).
std::pair<Extent, Extent> collective_tiles(const Transition& transition, int rank);

// Whether, in a transition by collectives, `rank` ends with its source tile itself (execute_reshard returns
// the view it was given): a lone allpermute that leaves the rank's tile in place. The block is then shared
// with the producer, as a block that stays put is on the point-to-point path.
bool keeps_source_tile(const Transition& transition, int rank);

// The mesh the engine lays distributed types on: one axis `r` of R ranks, prime-factored (r.0 minor).
redistribute::mesh::DeviceMesh rank_mesh(int ranks);

// The model's time for the point-to-point exchange between two layouts: the messages a target block
// gathers (the source blocks it overlaps) and the busiest rank's bytes.
double point_to_point_seconds(const redistribute::BlockLayout& from, const redistribute::BlockLayout& to,
                              const redistribute::ExchangeVolumes& volumes, std::size_t element_bytes,
                              const MachineModel& model);
// The model's time for a synthesized sequence: per step its stages (⌈log2 n⌉ for allgather and
// reducescatter, twice that for allreduce, n−1 for alltoall, 1 for allpermute) and the busiest rank's bytes.
double collective_seconds(const redistribute::mesh::ReshardPlan& plan, const redistribute::ExchangeVolumes& volumes,
                          std::size_t element_bytes, const MachineModel& model);

// Numbers layouts by content: equal layouts get one number, so that memos key by numbers instead of layouts.
// Keeps the first layout of each number alive (its representative, found again by address without a digest);
// another layout is found by its digest and compared with the representatives of that digest.
class LayoutNumbers {
 public:
  std::size_t number(const std::shared_ptr<const redistribute::BlockLayout>& layout);

 private:
  std::unordered_map<const redistribute::BlockLayout*, std::size_t> by_address_;
  std::unordered_multimap<std::uint64_t, std::size_t> by_digest_;
  std::vector<std::shared_ptr<const redistribute::BlockLayout>> representatives_;
};

// Chooses transitions for one schedule, keeping every sequence it synthesizes (a graph repeats the same
// pairs of types). Pure.
class TransitionChooser {
 public:
  TransitionChooser(int ranks, TransitionPolicy policy, MachineModel model);
  TransitionPolicy policy() const { return policy_; }
  const MachineModel& model() const { return model_; }
  const redistribute::mesh::DeviceMesh& mesh() const { return mesh_; }

  // Point-to-point, or collectives where both layouts are types on the mesh, the exchange moves something,
  // and the policy allows them (automatic: when the model says they are no slower). Equal arguments (equal
  // layouts) give the same object.
  using Layout = std::shared_ptr<const redistribute::BlockLayout>;
  std::shared_ptr<const Transition> choose(const Layout& from, const Layout& to, std::size_t element_bytes);
  // The collectives that take partial results in `from` (one summand per rank sharing a block, pending ⊕
  // `op`) to `to`, if both are types on the mesh; else null.
  std::shared_ptr<const Transition> from_partials(const Layout& from, AggOp op, const Layout& to,
                                                  std::size_t element_bytes);

 private:
  Transition choose_anew(const redistribute::BlockLayout& from, const redistribute::BlockLayout& to,
                         std::size_t from_number, std::size_t to_number, std::size_t element_bytes);
  std::optional<Transition> from_partials_anew(const redistribute::BlockLayout& from, AggOp op,
                                               const redistribute::BlockLayout& to, std::size_t from_number,
                                               std::size_t to_number, std::size_t element_bytes);
  Transition collectives(const redistribute::mesh::DistType& from, const redistribute::mesh::DistType& to,
                         std::size_t element_bytes);
  // What the volumes count the off-node part by: the model's ranks per node where it has two levels, else 0.
  int ranks_per_node() const { return model_.two_level() ? model_.ranks_per_node : 0; }
  // as_dist_type of the layout with this number on the mesh, found once.
  const std::optional<redistribute::mesh::DistType>& type_of(const redistribute::BlockLayout& layout,
                                                             std::size_t number);

  TransitionPolicy policy_;
  MachineModel model_;
  redistribute::mesh::DeviceMesh mesh_;
  // What choose and from_partials returned, by their arguments (layouts by number): a graph's vertices repeat
  // the same few layouts, and each choice costs an exchange count and mesh types; the layouts' types.
  LayoutNumbers numbers_;
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, std::shared_ptr<const Transition>> chosen_;
  std::map<std::tuple<std::size_t, std::size_t, AggOp, std::size_t>, std::shared_ptr<const Transition>> from_partials_;
  std::map<std::size_t, std::optional<redistribute::mesh::DistType>> types_;
};

}  // namespace einrel::engine

#endif
