#ifndef EINREL_SCHEDULEMEMO_HPP
#define EINREL_SCHEDULEMEMO_HPP

#include <einrel_Graph.hpp>
#include <einrel_MachineModel.hpp>
#include <einrel_Transition.hpp>
#include <einrel_VertexSchedule.hpp>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace einrel::engine {

// The choices of a schedule's transition pass (einrel_TransitionPass.cpp) that a producer's and a reader's
// VertexSchedule objects fix, each made once for every vertex, and every schedule, that shares those objects:
// the transitions themselves (TransitionChooser), an operand's move from an EinSum producer by (producer, reader,
// operand, element bytes), a reduction deferred or not by (producer, reader, operand, ⊕, element bytes), and the
// model's time for a vertex schedule's own reduction by (schedule, element bytes). Every entry keeps the
// schedules of its key alive, so that no later schedule takes their address.
struct TransitionChoices {
  TransitionChoices(int ranks, TransitionPolicy policy, const MachineModel& model) : chooser(ranks, policy, model) {}

  struct Choice {
    std::shared_ptr<const VertexSchedule> producer, reader;
    std::shared_ptr<const Transition> transition;  // none: the reduction cannot be deferred
    bool deferred = false;
    std::shared_ptr<const redistribute::BlockLayout> partials;  // the producer's partial layout, when deferred
  };
  TransitionChooser chooser;
  std::map<std::tuple<const VertexSchedule*, const VertexSchedule*, std::size_t, std::size_t>, Choice> moves;
  std::map<std::tuple<const VertexSchedule*, const VertexSchedule*, std::size_t, AggOp, std::size_t>, Choice>
      reductions_chosen;
  std::map<std::pair<const VertexSchedule*, std::size_t>, std::pair<std::shared_ptr<const VertexSchedule>, double>>
      reductions;
};

// What the schedules of one graph on the same ranks and machine share: the planner costs 8 to 16 candidate
// plans of a graph (einrel_PlanChoice.cpp), most of them cutting many vertices alike, and each part below costs
// O(p + R) to make. Holds the dense vertices' schedules by (first vertex of their kind, cut, tuple order) and,
// per transition policy, the TransitionChoices. Not thread-safe; one planning call's.
class ScheduleMemo {
 public:
  ScheduleMemo(const Graph& graph, int ranks, const MachineModel& model)
      : graph_(graph), ranks_(ranks), model_(model) {}
  // Whether a schedule of `graph` on `ranks` under `model` may use this memo (Schedule throws Error otherwise).
  bool serves(const Graph& graph, int ranks, const MachineModel& model) const {
    return &graph == &graph_ && ranks == ranks_ && model == model_;
  }
  using VertexKey = std::tuple<VertexId, std::vector<Extent>, std::string>;
  std::shared_ptr<const VertexSchedule>& dense_vertex(const VertexKey& key) { return vertices_[key]; }
  TransitionChoices& choices(TransitionPolicy policy) {
    return choices_.try_emplace(policy, ranks_, policy, model_).first->second;
  }

 private:
  const Graph& graph_;
  int ranks_;
  MachineModel model_;
  std::map<VertexKey, std::shared_ptr<const VertexSchedule>> vertices_;
  std::map<TransitionPolicy, TransitionChoices> choices_;
};

}  // namespace einrel::engine

#endif
