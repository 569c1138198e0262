#include <einrel_Error.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_ScheduleMemo.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

// Schedule's transition pass: how every operand moves, and which reductions are deferred (docs/engine.md
// "Transitions").

namespace einrel::engine {

using redistribute::BlockLayout;

namespace {

// The model's time for reducing a vertex's partial results on the owners of its output blocks (step 3 of
// execute): the busiest rank's messages and bytes; with two levels, those between ranks of one node at the
// node's rates.
double reduction_seconds(const VertexSchedule& vs, std::size_t element_bytes, const MachineModel& model) {
  const auto R = static_cast<std::size_t>(vs.ranks());
  const bool two = model.two_level();
  std::vector<Extent> messages(R, 0), sent(R, 0), received(R, 0);
  std::vector<Extent> messages_off(two ? R : 0, 0), sent_off(two ? R : 0, 0), received_off(two ? R : 0, 0);
  const BlockGrid& grid = vs.output_layout().grid();
  for (Extent g = 0; g < grid.num_blocks(); ++g) {
    const std::vector<int> ranks = vs.contributors(g);
    const Extent n = grid.block_size(g);
    for (std::size_t i = 1; i < ranks.size(); ++i) {
      ++messages[ranks[0]], received[ranks[0]] += n, sent[ranks[i]] += n;
      if (two && !model.same_node(ranks[0], ranks[i]))
        ++messages_off[ranks[0]], received_off[ranks[0]] += n, sent_off[ranks[i]] += n;
    }
  }
  const auto bytes = static_cast<Extent>(element_bytes);
  double slowest = 0;
  for (std::size_t r = 0; r < R; ++r) {
    if (!two) {
      slowest =
          std::max(slowest, model.latency_seconds * static_cast<double>(messages[r]) +
                                model.seconds_per_byte * static_cast<double>(std::max(sent[r], received[r]) * bytes));
      continue;
    }
    auto d = [](Extent n) { return static_cast<double>(n); };
    slowest = std::max(slowest, model.message_seconds(d(messages[r]), d(messages_off[r])) +
                                    std::max(model.byte_seconds(d(sent[r] * bytes), d(sent_off[r] * bytes)),
                                             model.byte_seconds(d(received[r] * bytes), d(received_off[r] * bytes))));
  }
  return slowest;
}

}  // namespace

// One pass over the vertices in order: each one's operand transitions, then whether an element-wise
// vertex combines two partial results where they lie, and whether its own reduction is deferred to its
// one reader's collectives.
class Schedule::TransitionPass {
 public:
  // `shared`: choices made for other schedules of the graph on the same ranks and machine (ScheduleMemo), or null.
  TransitionPass(Schedule& s, const Graph& graph, const MachineModel& model, TransitionChoices* shared)
      : s_(s),
        graph_(graph),
        model_(model),
        own_(shared ? std::nullopt : std::optional<TransitionChoices>(std::in_place, s.ranks_, s.policy_, model)),
        memo_(shared ? *shared : *own_),
        chooser_(memo_.chooser),
        readers_(graph.size()),
        to_reader_(graph.size()) {
    for (VertexId v = 0; v < graph.size(); ++v)
      for (std::size_t k = 0; k < graph.vertex(v).inputs.size(); ++k)
        readers_[graph.vertex(v).inputs[k]].emplace_back(v, k);
  }

  void run() {
    s_.deferred_.assign(graph_.size(), false);
    s_.transitions_.assign(graph_.size(), {});
    s_.reads_again_.assign(graph_.size(), {});
    for (VertexId v = 0; v < graph_.size(); ++v) {
      if (graph_.vertex(v).is_input()) continue;
      if (s_.policy_ != TransitionPolicy::point_to_point && s_.ranks_ > 1) combine_partials(v);
      operand_transitions(v);
      choose_reduction(v);
    }
    for (VertexId v = 0; v < graph_.size(); ++v) {
      if (graph_.vertex(v).is_input()) continue;
      double& seconds = s_.communication_seconds_[v];
      for (const auto& t : s_.transitions_[v])
        if (t) seconds += t->seconds;
      if (!s_.deferred_[v] && !s_.vertices_[v]->on_partials()) seconds += reduction(v);
    }
  }

 private:
  std::size_t element_bytes(VertexId v) const { return dtype_bytes(graph_.vertex(v).dtype); }
  // Layouts of EinSum vertex v's schedule, owned by it (the chooser keeps the layouts it numbers alive).
  std::shared_ptr<const BlockLayout> operand_layout(VertexId v, std::size_t k) const {
    return {s_.vertices_[v], &s_.vertices_[v]->operand_layout(k)};
  }
  std::shared_ptr<const BlockLayout> output_layout(VertexId v) const {
    return {s_.vertices_[v], &s_.vertices_[v]->output_layout()};
  }

  // reduction_seconds of v's schedule, found once for the vertices that share it.
  double reduction(VertexId v) {
    const auto [known, fresh] = memo_.reductions.try_emplace({s_.vertices_[v].get(), element_bytes(v)});
    if (fresh) known->second = {s_.vertices_[v], reduction_seconds(*s_.vertices_[v], element_bytes(v), model_)};
    return known->second.second;
  }

  // The model's time for producer `in` reaching its one reader as decided at its turn.
  double reaching(VertexId in, VertexId reader, std::size_t k) {
    const double reduce = s_.deferred_[in] ? 0 : reduction(in);
    return reduce + (to_reader_[in]
                         ? to_reader_[in]->seconds
                         : chooser_.choose(s_.layouts_[in], operand_layout(reader, k), element_bytes(in))->seconds);
  }

  // Whether element-wise vertex v can combine two partial results as they are (deferred(v)), and then does.
  void combine_partials(VertexId v) {
    const Vertex& vertex = graph_.vertex(v);
    const EinSum& e = vertex.resolved->einsum();
    if (vertex.inputs.size() != 2 || vertex.inputs[0] == vertex.inputs[1] || s_.kept_[v] || readers_[v].size() != 1 ||
        s_.shapes_[vertex.inputs[0]] || s_.shapes_[vertex.inputs[1]] || e.map.kind != MapKind::identity ||
        e.inputs[0] != e.output || e.inputs[1] != e.output)
      return;
    const VertexId P = vertex.inputs[0], Q = vertex.inputs[1];
    for (VertexId in : {P, Q}) {
      const Vertex& producer = graph_.vertex(in);
      if (producer.is_input() || s_.vertices_[in]->group_size() == 1 || s_.kept_[in] || readers_[in].size() != 1 ||
          combining_join(producer.resolved->einsum().agg) != e.join || producer.dtype != vertex.dtype)
        return;
    }
    const auto shared = std::make_shared<const BlockLayout>(s_.vertices_[P]->partial_layout());
    if (!(s_.vertices_[Q]->partial_layout() == *shared)) return;
    const auto [w, k] = readers_[v][0];
    const std::size_t element = element_bytes(v);
    std::shared_ptr<const Transition> combined =
        chooser_.from_partials(shared, graph_.vertex(P).resolved->einsum().agg, operand_layout(w, k), element);
    if (!combined) return;
    const double apart = reaching(P, v, 0) + reaching(Q, v, 1) +
                         chooser_.choose(output_layout(v), operand_layout(w, k), element)->seconds;
    if (s_.policy_ != TransitionPolicy::collectives && combined->seconds > apart) return;
    s_.vertices_[v] = std::make_shared<const VertexSchedule>(vertex, *shared);
    for (VertexId in : {P, Q, v}) s_.deferred_[in] = true, s_.layouts_[in] = shared;
    for (VertexId in : {P, Q}) to_reader_[in] = chooser_.choose(shared, shared, element);  // nothing moves
    to_reader_[v] = std::move(combined);
  }

  void operand_transitions(VertexId v) {
    const Vertex& vertex = graph_.vertex(v);
    s_.reads_again_[v].assign(vertex.inputs.size(), false);
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      const VertexId in = vertex.inputs[k];
      if (s_.shared_[v][k] || s_.streamed_[in]) {
        s_.transitions_[v].emplace_back();
      } else if (to_reader_[in]) {
        s_.transitions_[v].push_back(to_reader_[in]);
      } else if (!graph_.vertex(in).is_input()) {  // its layout is its schedule's output layout
        const auto [known, fresh] =
            memo_.moves.try_emplace({s_.vertices_[in].get(), s_.vertices_[v].get(), k, element_bytes(in)});
        if (fresh)
          known->second = {s_.vertices_[in], s_.vertices_[v],
                           chooser_.choose(s_.layouts_[in], operand_layout(v, k), element_bytes(in)), false, nullptr};
        s_.transitions_[v].push_back(known->second.transition);
      } else {
        const std::shared_ptr<const BlockLayout> to = operand_layout(v, k);
        std::shared_ptr<const Transition> moved = chooser_.choose(s_.layouts_[in], to, element_bytes(in));
        if (const auto read = reads_again(in, *to, *moved)) {
          s_.reads_again_[v][k] = true;
          s_.communication_seconds_[v] += *read;
          s_.transitions_[v].emplace_back();
        } else {
          s_.transitions_[v].push_back(std::move(moved));
        }
      }
    }
  }

  // The model's time for reading a graph input again from its source into `to`, when that is better than
  // moving it there from its layout (InputReads::again, not carried, the move sends something, and the read
  // is no slower); else nothing.
  std::optional<double> reads_again(VertexId in, const BlockLayout& to, const Transition& moved) const {
    if (s_.reads_ != InputReads::again || !graph_.vertex(in).is_input() || s_.carried_[in]) return std::nullopt;
    if (moved.volumes.sent.max() == 0) return std::nullopt;
    const double read = read_seconds(in, to);
    return read <= moved.seconds ? std::optional<double>(read) : std::nullopt;
  }

  // The model's time for the busiest rank to read input `in` again into `to`: the blocks of `to` it does not
  // already hold.
  double read_seconds(VertexId in, const BlockLayout& to) const {
    const BlockLayout& from = *s_.layouts_[in];
    const bool same_cut = from.grid() == to.grid();
    std::vector<Extent> read(static_cast<std::size_t>(s_.ranks_), 0);
    for (Extent b = 0; b < to.grid().num_blocks(); ++b)
      for (int i = 0; i < to.placement().num_sites(b); ++i) {
        const int r = to.placement().site(b, i);
        if (!(same_cut && from.placement().holds(r, b))) read[r] += to.grid().block_size(b);
      }
    const double busiest = static_cast<double>(*std::max_element(read.begin(), read.end()));
    return busiest * static_cast<double>(element_bytes(in)) * model_.file_seconds_per_byte;
  }

  // Reduce v's partial results to its owners, or leave them for its one reader's collectives.
  void choose_reduction(VertexId v) {
    const VertexSchedule& vs = *s_.vertices_[v];
    if (vs.group_size() == 1 || s_.kept_[v] || readers_[v].size() != 1 || vs.on_partials() || s_.shapes_[v]) return;
    const auto [w, k] = readers_[v][0];
    const std::size_t element = element_bytes(v);
    const AggOp agg = graph_.vertex(v).resolved->einsum().agg;
    const auto [known, fresh] = memo_.reductions_chosen.try_emplace({&vs, s_.vertices_[w].get(), k, agg, element});
    TransitionChoices::Choice& c = known->second;
    if (fresh) {
      c.producer = s_.vertices_[v], c.reader = s_.vertices_[w];
      const std::shared_ptr<const BlockLayout> to = operand_layout(w, k);
      auto partials = std::make_shared<const BlockLayout>(vs.partial_layout());
      std::shared_ptr<const Transition> deferred = chooser_.from_partials(partials, agg, to, element);
      if (!deferred) return;
      std::shared_ptr<const Transition> reduced = chooser_.choose(output_layout(v), to, element);
      c.deferred = s_.policy_ == TransitionPolicy::collectives || deferred->seconds <= reduction(v) + reduced->seconds;
      c.transition = c.deferred ? std::move(deferred) : std::move(reduced);
      if (c.deferred) c.partials = std::move(partials);
    }
    if (!c.transition) return;
    if (c.deferred) {
      s_.deferred_[v] = true;
      s_.layouts_[v] = c.partials;
    }
    to_reader_[v] = c.transition;
  }

  Schedule& s_;
  const Graph& graph_;
  const MachineModel& model_;
  std::optional<TransitionChoices> own_;  // where no memo is shared
  TransitionChoices& memo_;
  TransitionChooser& chooser_;
  std::vector<std::vector<std::pair<VertexId, std::size_t>>> readers_;
  std::vector<std::shared_ptr<const Transition>> to_reader_;  // chosen with the deferral of a producer
};

void Schedule::choose_transitions(const Graph& graph, const MachineModel& model, TransitionChoices* shared) {
  TransitionPass(*this, graph, model, shared).run();
}

}  // namespace einrel::engine
