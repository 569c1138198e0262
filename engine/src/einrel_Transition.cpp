#include <einrel_Error.hpp>
#include <einrel_ReshardVolumes.hpp>
#include <einrel_Transition.hpp>

#include <algorithm>
#include <cmath>

namespace einrel::engine {

using redistribute::BlockLayout;
using redistribute::ExchangeVolumes;
using redistribute::mesh::Collective;

std::string_view transition_policy_name(TransitionPolicy policy) {
  switch (policy) {
    case TransitionPolicy::automatic:
      return "auto";
    case TransitionPolicy::point_to_point:
      return "point-to-point";
    case TransitionPolicy::collectives:
      return "collectives";
  }
  return "?";
}

TransitionPolicy parse_transition_policy(const std::string& text) {
  for (TransitionPolicy p :
       {TransitionPolicy::automatic, TransitionPolicy::point_to_point, TransitionPolicy::collectives})
    if (text == transition_policy_name(p)) return p;
  throw Error("unknown transition policy " + quoted(text) + " (expected auto, point-to-point or collectives)");
}

std::string_view input_reads_name(InputReads reads) { return reads == InputReads::again ? "again" : "move"; }

InputReads parse_input_reads(const std::string& text) {
  for (InputReads r : {InputReads::move, InputReads::again})
    if (text == input_reads_name(r)) return r;
  throw Error("unknown input reads " + quoted(text) + " (expected again or move)");
}

std::string_view transition_path_name(TransitionPath path) {
  return path == TransitionPath::collectives ? "collectives" : "point_to_point";
}

bool keeps_source_tile(const Transition& transition, int rank) {
  return transition.plan && transition.plan->steps.size() == 1 &&
         transition.plan->steps[0].op == Collective::allpermute && transition.volumes.received[rank] == 0;
}

std::pair<Extent, Extent> collective_tiles(const Transition& transition, int rank) {
  const redistribute::mesh::DeviceMesh& mesh = transition.plan.value().mesh;
  return {redistribute::mesh::tile_id(transition.to_tile_weights, mesh, rank),
          redistribute::mesh::tile_id(transition.from_tile_weights, mesh, rank)};
}

redistribute::mesh::DeviceMesh rank_mesh(int ranks) {
  return redistribute::mesh::DeviceMesh({{"r", ranks}}).prime_factored();
}

namespace {

// The busiest rank's bytes at the network's rate or, where `v` counts what crosses nodes, its bytes within
// its node at the node's rate and the rest at the network's (docs/planner.md "Nodes").
double busiest_byte_seconds(const ExchangeVolumes& v, std::size_t element_bytes, const MachineModel& model) {
  if (v.sent_off_node.empty()) {
    const Extent most = std::max(v.sent.max(), v.received.max());
    return model.seconds_per_byte * static_cast<double>(most) * static_cast<double>(element_bytes);
  }
  auto d = [&](Extent n) { return static_cast<double>(n) * static_cast<double>(element_bytes); };
  double most = 0;
  for (std::size_t r = 0; r < v.sent.size(); ++r)
    most = std::max({most, model.byte_seconds(d(v.sent[r]), d(v.sent_off_node[r])),
                     model.byte_seconds(d(v.received[r]), d(v.received_off_node[r]))});
  return most;
}

bool moves(const ExchangeVolumes& v) { return v.sent.max() > 0; }

double stages(const redistribute::mesh::ReshardStep& step, const redistribute::mesh::DeviceMesh& primes) {
  const Extent n = redistribute::mesh::group_size(step, primes);
  const double log_n = std::ceil(std::log2(static_cast<double>(n)));
  switch (step.op) {
    case Collective::allgather:
    case Collective::reducescatter:
      return log_n;
    case Collective::allreduce:
      return 2 * log_n;
    case Collective::alltoall:
      return static_cast<double>(n - 1);
    case Collective::allpermute:
      return 1;
    case Collective::dynslice:
      return 0;
  }
  return 0;
}

// A bound below the model's time for any sequence of collectives between two layouts whose point-to-point
// exchange has `v` (collective_seconds): a rank ends with its target blocks, so it receives at least what the
// exchange sends it (exactly the elements it needs and does not hold), and a sequence that moves something
// has a step of at least one stage. Every byte and the stage at the cheaper level's rates; lowered by 1e-9 so
// that rounding never makes it exceed a sequence's time.
double collectives_bound(const ExchangeVolumes& v, std::size_t element_bytes, const MachineModel& model) {
  const Extent most = v.received.max();
  const double bytes = static_cast<double>(most) * static_cast<double>(element_bytes);
  const bool two = model.two_level();
  const double latency = two ? std::min(model.latency_seconds, model.node_latency_seconds) : model.latency_seconds;
  const double per_byte = two ? std::min(model.seconds_per_byte, model.node_seconds_per_byte) : model.seconds_per_byte;
  return (latency + per_byte * bytes) * (1 - 1e-9);
}

}  // namespace

double point_to_point_seconds(const BlockLayout& from, const BlockLayout& to, const ExchangeVolumes& volumes,
                              std::size_t element_bytes, const MachineModel& model) {
  if (!moves(volumes)) return 0;
  const BlockGrid& target = to.grid();
  int messages = 0, on_node = 0;  // the messages target block 0's first site gathers, and of them from its node
  const int reader = to.placement().site(0, 0);
  for_each_overlap(from.grid(), target.box(target.key(0)), [&](const std::vector<Extent>& key, const auto&) {
    ++messages;
    const int writer = model.two_level() ? from.placement().source_for(from.grid().id(key), reader) : -1;
    if (writer >= 0 && model.same_node(writer, reader)) ++on_node;
  });
  const double latency =
      model.two_level() ? model.message_seconds(messages, messages - on_node) : model.latency_seconds * messages;
  return latency + busiest_byte_seconds(volumes, element_bytes, model);
}

double collective_seconds(const redistribute::mesh::ReshardPlan& plan, const ExchangeVolumes& volumes,
                          std::size_t element_bytes, const MachineModel& model) {
  double n = 0;
  if (!model.two_level()) {
    for (const redistribute::mesh::ReshardStep& step : plan.steps) n += stages(step, plan.primes);
    return model.latency_seconds * n + busiest_byte_seconds(volumes, element_bytes, model);
  }
  double latency = 0;  // a step's stages at the network's latency where one of its groups spans nodes
  const std::vector<bool> across = redistribute::mesh::steps_across_nodes(plan, model.ranks_per_node);
  for (std::size_t s = 0; s < plan.steps.size(); ++s)
    latency += stages(plan.steps[s], plan.primes) * (across[s] ? model.latency_seconds : model.node_latency_seconds);
  return latency + busiest_byte_seconds(volumes, element_bytes, model);
}

TransitionChooser::TransitionChooser(int ranks, TransitionPolicy policy, MachineModel model)
    : policy_(policy), model_(model), mesh_(rank_mesh(ranks)) {}

Transition TransitionChooser::collectives(const redistribute::mesh::DistType& from,
                                          const redistribute::mesh::DistType& to, std::size_t element_bytes) {
  const std::shared_ptr<const redistribute::mesh::ReshardPlan> memo =
      redistribute::mesh::memoized_reshard(mesh_, from, to);
  const redistribute::mesh::ReshardPlan& plan = *memo;
  Transition t{TransitionPath::collectives,
               plan,
               redistribute::mesh::reshard_volumes(plan, ranks_per_node()),
               0,
               redistribute::mesh::tile_weights(plan.to, plan.mesh),
               redistribute::mesh::tile_weights(plan.from, plan.mesh),
               {}};
  t.seconds = collective_seconds(plan, t.volumes, element_bytes, model_);
  t.scratch = redistribute::mesh::reshard_scratch(plan);
  return t;
}

std::size_t LayoutNumbers::number(const std::shared_ptr<const BlockLayout>& layout) {
  if (const auto known = by_address_.find(layout.get()); known != by_address_.end()) return known->second;
  const std::uint64_t digest = layout->digest();
  for (auto [it, last] = by_digest_.equal_range(digest); it != last; ++it)
    if (*representatives_[it->second] == *layout) return it->second;
  const std::size_t n = representatives_.size();
  representatives_.push_back(layout);
  by_address_.emplace(layout.get(), n);
  by_digest_.emplace(digest, n);
  return n;
}

const std::optional<redistribute::mesh::DistType>& TransitionChooser::type_of(const BlockLayout& layout,
                                                                              std::size_t number) {
  auto [known, fresh] = types_.try_emplace(number);
  if (fresh) known->second = redistribute::mesh::as_dist_type(layout, mesh_);
  return known->second;
}

std::shared_ptr<const Transition> TransitionChooser::choose(const Layout& from, const Layout& to,
                                                            std::size_t element_bytes) {
  const std::size_t f = numbers_.number(from), t = numbers_.number(to);
  auto [known, fresh] = chosen_.try_emplace({f, t, element_bytes});
  if (fresh) known->second = std::make_shared<const Transition>(choose_anew(*from, *to, f, t, element_bytes));
  return known->second;
}

Transition TransitionChooser::choose_anew(const BlockLayout& from, const BlockLayout& to, std::size_t from_number,
                                          std::size_t to_number, std::size_t element_bytes) {
  Transition p2p{TransitionPath::point_to_point,
                 std::nullopt,
                 redistribute::exchange_volumes(from, to, ranks_per_node()),
                 0,
                 {},
                 {},
                 {}};
  p2p.seconds = point_to_point_seconds(from, to, p2p.volumes, element_bytes, model_);
  if (policy_ == TransitionPolicy::point_to_point || mesh_.size() < 2 || !moves(p2p.volumes)) return p2p;
  if (policy_ == TransitionPolicy::automatic && p2p.seconds < collectives_bound(p2p.volumes, element_bytes, model_))
    return p2p;  // no sequence of collectives can be as fast: not synthesized
  const auto& source = type_of(from, from_number);
  if (!source) return p2p;
  const auto& target = type_of(to, to_number);
  if (!target) return p2p;
  Transition coll = collectives(*source, *target, element_bytes);
  return policy_ == TransitionPolicy::collectives || coll.seconds <= p2p.seconds ? coll : p2p;
}

std::shared_ptr<const Transition> TransitionChooser::from_partials(const Layout& from, AggOp op, const Layout& to,
                                                                   std::size_t element_bytes) {
  const std::size_t f = numbers_.number(from), t = numbers_.number(to);
  auto [known, fresh] = from_partials_.try_emplace({f, t, op, element_bytes});
  if (fresh)
    if (std::optional<Transition> made = from_partials_anew(*from, op, *to, f, t, element_bytes))
      known->second = std::make_shared<const Transition>(std::move(*made));
  return known->second;
}

std::optional<Transition> TransitionChooser::from_partials_anew(const BlockLayout& from, AggOp op,
                                                                const BlockLayout& to, std::size_t from_number,
                                                                std::size_t to_number, std::size_t element_bytes) {
  if (policy_ == TransitionPolicy::point_to_point || mesh_.size() < 2) return std::nullopt;
  const auto& source = type_of(from, from_number);
  if (!source) return std::nullopt;
  const auto& target = type_of(to, to_number);
  if (!target) return std::nullopt;
  const redistribute::mesh::DistType partial = redistribute::mesh::as_partial_type(*source, mesh_, op);
  if (partial.partial.empty()) return std::nullopt;
  return collectives(partial, *target, element_bytes);
}

}  // namespace einrel::engine
