#include <einrel_ContractionChains.hpp>
#include <einrel_ContractionOrder.hpp>
#include <einrel_Error.hpp>
#include <einrel_PlanChoice.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <vector>

// choose_plan's search of contraction orders around plan_in_graph_order (docs/planner.md "Contraction order").
namespace einrel::engine {

namespace {

// Another order of an n-ary einsum replaces the one kept so far only where its plan is estimated this much faster:
// the model's rates for small or thin calls are not finer than that (docs/planner.md "Contraction order").
constexpr double order_margin = 0.05;

// The candidate orders of n-ary einsum `k` of `graph` other than the one it has (contraction_orders' first).
std::vector<ContractionOrder> other_orders(const Graph& graph, std::size_t k) {
  const NaryEinsum& n = graph.nary_einsums()[k];
  std::vector<Bound> bounds;
  for (VertexId operand : n.operands) bounds.push_back(graph.vertex(operand).bound);
  std::vector<ContractionOrder> orders = contraction_orders(resolve(n.einsum, bounds));
  orders.erase(orders.begin());
  return orders;
}

// Offers the plan of `graph` (`held` where it is not the graph choose_plan was given) to `best`: kept where
// there is none yet or it is estimated order_margin faster. An Error (nothing fits the memory limit) is kept in
// `error` where none is yet.
bool offer(const Graph& graph, const std::shared_ptr<const Graph>& held, int ranks, const Options& options,
           const partition::Carried& carried, std::optional<FittedPlan>& best, std::exception_ptr& error) {
  try {
    FittedPlan fitted = plan_in_graph_order(graph, ranks, options, carried);
    if (best && !(fitted.estimated_seconds() < (1 - order_margin) * best->estimated_seconds())) return false;
    fitted.reordered = held;
    best = std::move(fitted);
    return true;
  } catch (const Error&) {
    if (!error) error = std::current_exception();
    return false;
  }
}

// `graph` as it is, then each of its n-ary einsums in turn in each of its other orders with the orders kept so
// far for the others, offered to `best`.
void search_orders(const Graph& graph, const std::shared_ptr<const Graph>& held, int ranks, const Options& options,
                   const partition::Carried& carried, std::optional<FittedPlan>& best, std::exception_ptr& error) {
  offer(graph, held, ranks, options, carried, best, error);
  std::shared_ptr<const Graph> chosen = held;  // the graph with the orders kept so far; null: `graph`
  for (std::size_t k = 0; k < graph.nary_einsums().size(); ++k) {
    const std::shared_ptr<const Graph> kept = chosen;  // `chosen` may change below; its graph must not go
    const Graph& base = kept ? *kept : graph;
    for (const ContractionOrder& order : other_orders(base, k)) {
      auto reordered = std::make_shared<const Graph>(base.with_order(k, order));
      if (offer(*reordered, reordered, ranks, options, carried, best, error)) chosen = std::move(reordered);
    }
  }
}

}  // namespace

FittedPlan choose_plan(const Graph& graph, int ranks, const Options& options, const partition::Carried& carried) {
  if (options.objective != Objective::makespan || !options.plan_order)
    return plan_in_graph_order(graph, ranks, options, carried);
  // The graph as written and its n-ary einsums' other orders; then its explicit chains of binary contractions as
  // n-ary einsums, in each of their orders (not with carried values: those are named by vertex id). Where
  // nothing fits a memory limit in the graph as written, another order may; the error is the graph's where
  // none does.
  std::optional<FittedPlan> best;
  std::exception_ptr error;
  search_orders(graph, nullptr, ranks, options, carried, best, error);
  const ChainMerge merge = options.memory_limit ? ChainMerge::every_order : ChainMerge::cheaper_by_flops;
  if (carried.empty())
    if (std::optional<Graph> merged = merge_contraction_chains(graph, merge)) {
      const auto held = std::make_shared<const Graph>(std::move(*merged));
      search_orders(*held, held, ranks, options, carried, best, error);
    }
  if (!best) std::rethrow_exception(error);
  return std::move(*best);
}

}  // namespace einrel::engine
