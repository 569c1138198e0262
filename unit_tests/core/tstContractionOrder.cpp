// contraction_order against an oracle written here from the flop count alone (a brute force over every
// pairwise order, and an exact search over subsets with every split), on opt_einsum's own test expressions
// and on random networks made the way opt_einsum's testing.rand_equation makes them.
#include <einrel_ContractionOrder.hpp>
#include <einrel_Graph.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace einrel;

// opt_einsum's testing._default_dim_dict: the extents its test expressions are built with.
const std::map<char, Extent> opt_einsum_sizes = {{'a', 2}, {'b', 3}, {'c', 4}, {'d', 5}, {'e', 4}, {'f', 3}, {'g', 2},
                                                 {'h', 6}, {'i', 5}, {'j', 4}, {'k', 3}, {'l', 2}, {'m', 5}, {'o', 7},
                                                 {'p', 4}, {'q', 3}, {'A', 2}, {'B', 3}, {'C', 4}};

ResolvedEinSum resolved(const std::string& equation, const std::map<char, Extent>& extent) {
  const auto arrow = equation.find("->");
  std::size_t operands = 1;
  for (std::size_t i = 0; i < arrow; ++i) operands += equation[i] == ',';
  const EinSum e = EinSum::parse(equation, operands);
  std::vector<Bound> bounds;
  for (const std::string& in : e.inputs) {
    Bound b;
    for (char c : in) b.push_back(extent.at(c));
    bounds.push_back(b);
  }
  return resolve(e, bounds);
}

// ---- The oracle: nothing here is einrel's ----

using Labels = std::set<char>;

double size_of(const Labels& labels, const std::map<char, Extent>& extent) {
  double n = 1;
  for (char c : labels) n *= static_cast<double>(extent.at(c));
  return n;
}

// The flops of joining a and b when `rest` remain beside them: every label of the pair, twice where one
// is summed (needed neither by the output nor by an operand of `rest`); the result's labels in `result`.
double join_flops(const Labels& a, const Labels& b, const std::vector<Labels>& rest, const Labels& output,
                  const std::map<char, Extent>& extent, Labels& result) {
  Labels pair = a;
  pair.insert(b.begin(), b.end());
  result.clear();
  for (char c : pair) {
    bool needed = output.count(c) > 0;
    for (const Labels& r : rest) needed = needed || r.count(c) > 0;
    if (needed) result.insert(c);
  }
  return size_of(pair, extent) * (result.size() < pair.size() ? 2 : 1);
}

// The least flops + weight × elements written (every step's result, the output included) over every sequence of
// pairwise joins (operands up to ~7): with weight 0 the fewest flops; else the measure of contraction_orders'
// alternatives.
double weighted_brute_force(const std::vector<Labels>& ops, const Labels& output, const std::map<char, Extent>& extent,
                            double weight) {
  if (ops.size() == 1) return 0;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < ops.size(); ++i)
    for (std::size_t j = i + 1; j < ops.size(); ++j) {
      std::vector<Labels> rest;
      for (std::size_t k = 0; k < ops.size(); ++k)
        if (k != i && k != j) rest.push_back(ops[k]);
      Labels joined;
      const double here = join_flops(ops[i], ops[j], rest, output, extent, joined) + weight * size_of(joined, extent);
      if (here >= best) continue;
      rest.push_back(joined);
      best = std::min(best, here + weighted_brute_force(rest, output, extent, weight));
    }
  return best;
}

// The fewest flops over every sequence of pairwise joins (operands up to ~7).
double brute_force(const std::vector<Labels>& ops, const Labels& output, const std::map<char, Extent>& extent) {
  return weighted_brute_force(ops, output, extent, 0);
}

// The same measure of the steps of an order, replayed on label sets.
double weighted_cost(const std::vector<NaryStep>& steps, std::vector<Labels> ops, const Labels& output,
                     const std::map<char, Extent>& extent, double weight) {
  double cost = 0;
  for (const NaryStep& step : steps) {
    std::vector<Labels> rest;
    for (std::size_t k = 0; k < ops.size(); ++k)
      if (k != step.first && k != step.second) rest.push_back(ops[k]);
    Labels joined;
    cost +=
        join_flops(ops[step.first], ops[step.second], rest, output, extent, joined) + weight * size_of(joined, extent);
    ops[step.first] = joined;
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(step.second));
  }
  return cost;
}

// The same minimum by memoised search over subsets of the operands, every split (operands up to ~12).
double exact_by_subsets(const std::vector<Labels>& ops, const Labels& output, const std::map<char, Extent>& extent) {
  const std::uint32_t all = (1u << ops.size()) - 1;
  std::map<std::uint32_t, double> best;
  auto labels_of = [&](std::uint32_t s) {
    Labels l;
    for (std::size_t k = 0; k < ops.size(); ++k)
      if (s >> k & 1) l.insert(ops[k].begin(), ops[k].end());
    return l;
  };
  // What the result of subset s holds: its labels that the output or the other operands need.
  std::map<std::uint32_t, Labels> results;
  auto result_of = [&](std::uint32_t s) -> const Labels& {
    if (auto it = results.find(s); it != results.end()) return it->second;
    if ((s & (s - 1)) == 0) return results[s] = labels_of(s);
    Labels outside = output, kept;
    const Labels others = labels_of(all & ~s);
    outside.insert(others.begin(), others.end());
    for (char c : labels_of(s))
      if (outside.count(c)) kept.insert(c);
    return results[s] = kept;
  };
  std::function<double(std::uint32_t)> solve = [&](std::uint32_t s) -> double {
    if ((s & (s - 1)) == 0) return 0;
    if (auto it = best.find(s); it != best.end()) return it->second;
    double b = std::numeric_limits<double>::infinity();
    for (std::uint32_t a = (s - 1) & s; a > 0; a = (a - 1) & s) {
      const std::uint32_t c = s & ~a;
      if (a < c) continue;  // each split once
      Labels pair = result_of(a);
      const Labels& rc = result_of(c);
      pair.insert(rc.begin(), rc.end());
      const double flops = size_of(pair, extent) * (result_of(s).size() < pair.size() ? 2 : 1);
      b = std::min(b, solve(a) + solve(c) + flops);
    }
    return best[s] = b;
  };
  return solve(all);
}

struct Oracle {
  std::vector<Labels> ops;
  Labels output;
};
Oracle oracle_of(const ResolvedEinSum& r) {
  Oracle o;
  for (const std::string& in : r.einsum().inputs) o.ops.emplace_back(in.begin(), in.end());
  o.output = Labels(r.einsum().output.begin(), r.einsum().output.end());
  return o;
}
// The steps are a decomposition of the expression: each joins two current operands, the last gives the output.
void expect_valid(const ResolvedEinSum& r, const ContractionOrder& order) {
  ASSERT_EQ(order.steps.size(), r.arity() - 1);
  std::size_t live = r.arity();
  for (const NaryStep& s : order.steps) {
    EXPECT_LT(s.first, s.second);
    EXPECT_LT(s.second, live);
    --live;
  }
  EXPECT_EQ(order.steps.back().labels, r.einsum().output);
  EXPECT_DOUBLE_EQ(costed_order(r, order.steps).flops, order.flops);
}

// opt_einsum's tests/test_contract.py expressions of three or more operands without repeated labels in an
// operand (einrel has no diagonals), implicit outputs written out as numpy reads them, opt_einsum's extents.
const std::vector<std::string> opt_einsum_expressions = {
    "a,ab,abc->abc",
    "a,b,ab->ab",
    "ea,fb,gc,hd,abcd->efgh",
    "ea,fb,abcd,gc,hd->efgh",
    "abcd,ea,fb,gc,hd->efgh",
    "cd,bdhe,aidb,hgca,gc,hgibcd,hgac->e",
    "abhe,hidj,jgba,hiab,gab->de",
    "bde,cdh,agdb,hica,ibd,hgicd,hiac->e",
    "chd,bde,agbc,hiad,hgc,hgi,hiad->e",
    "chd,bde,agbc,hiad,bdi,cgh,agdb->e",
    "ab,ab,c->",
    "ab,ab,c->c",
    "ab,ab,cd,cd->",
    "ab,ab,cd,cd->ac",
    "ab,ab,cd,cd->cd",
    "ab,ab,cd,cd,ef,ef->",
    "ab,cd,ef->abcdef",
    "ab,cd,ef->acdf",
    "ab,cd,de->abcde",
    "ab,cd,de->be",
    "ab,bcd,cd->abcd",
    "ab,bcd,cd->abd",
    "eb,cb,fb->cef",
    "bca,cdb,dbf,afc->",
    "bd,db,eac->ace",
    "efc,dbc,acf,fd->abe",
    "dba,ead,cad->bce",
    "aef,fbc,dca->bde",
    "hbc,bdef,cdkj,ji,ikeh,lfo->lo",
    "ijab,acd,bce,df,ef->ji",
    "ab,cd,ad,cb->",
    "abc,bdef,fghj,cem,mhk,ljk->adgl",
};

TEST(ContractionOrder, OptEinsumExpressionsGetTheFewestFlops) {
  for (const std::string& eq : opt_einsum_expressions) {
    SCOPED_TRACE(eq);
    const ResolvedEinSum r = resolved(eq, opt_einsum_sizes);
    const ContractionOrder order = contraction_order(r);
    expect_valid(r, order);
    const Oracle o = oracle_of(r);
    EXPECT_EQ(order.flops, brute_force(o.ops, o.output, opt_einsum_sizes));
    EXPECT_EQ(order.method, r.arity() <= exhaustive_operands ? "exhaustive" : "dp");
  }
}

// opt_einsum's tests/test_paths.py (test_custom_dp_can_set_minimize): its dynamic program, minimising flops, costs
// rand_equation(10, 4, seed=43) at 663054. The expression and extents are that function's output for that seed
// (numpy's legacy generator; the port reproduces the example in rand_equation's docstring).
TEST(ContractionOrder, MatchesOptEinsumsPublishedDpCost) {
  const std::map<char, Extent> sizes = {{'a', 6}, {'b', 2}, {'c', 9}, {'d', 3}, {'e', 7}, {'f', 4}, {'g', 2},
                                        {'h', 5}, {'i', 3}, {'j', 5}, {'k', 5}, {'l', 4}, {'m', 8}, {'n', 8},
                                        {'o', 9}, {'p', 2}, {'q', 5}, {'r', 9}, {'s', 4}, {'t', 5}};
  const ResolvedEinSum r = resolved("qgcf,sotr,klb,jlretia,hpn,nseha,jgoqm,ipkb,cdfm,d->", sizes);
  const ContractionOrder order = contraction_order(r);
  expect_valid(r, order);
  EXPECT_EQ(order.flops, 663054);
  const Oracle o = oracle_of(r);
  EXPECT_EQ(order.flops, exact_by_subsets(o.ops, o.output, sizes));
}

// The example: the greedy split formed pi,qj->piqj (N^4) and then a 2N^6 contraction; the best order
// applies one matrix at a time, 4 steps of 2N^5.
TEST(ContractionOrder, FourIndexTransformIsOneMatrixAtATime) {
  const Extent n = 48;
  const std::map<char, Extent> sizes = {{'p', n}, {'q', n}, {'r', n}, {'s', n}, {'i', n}, {'j', n}, {'k', n}, {'l', n}};
  const ResolvedEinSum r = resolved("pi,qj,ijkl,rk,sl->pqrs", sizes);
  const ContractionOrder order = contraction_order(r);
  expect_valid(r, order);
  const double n5 = static_cast<double>(n) * n * n * n * n;
  EXPECT_EQ(order.flops, 8 * n5);
  EXPECT_EQ(order.largest_intermediate, static_cast<double>(n) * n * n * n);
}

// A random network as opt_einsum's rand_equation makes one (each label on two operands or in the output, extents
// 2..9), as an expression and its extents.
std::pair<std::string, std::map<char, Extent>> random_network(std::mt19937& rng, int n, int regularity, int outputs) {
  const int labels = n * regularity / 2 + outputs;
  std::map<char, Extent> sizes;
  std::vector<char> slots;
  std::string output;
  for (int l = 0; l < labels; ++l) {
    const char c = static_cast<char>(l < 26 ? 'a' + l : 'A' + l - 26);
    sizes[c] = std::uniform_int_distribution<Extent>(2, 9)(rng);
    slots.push_back(c);
    if (l < outputs)
      output += c;
    else
      slots.push_back(c);
  }
  std::shuffle(slots.begin(), slots.end(), rng);
  std::vector<std::string> ops(static_cast<std::size_t>(n));
  for (std::size_t s = 0; s < slots.size(); ++s) {
    std::size_t where = s < ops.size() ? s : std::uniform_int_distribution<std::size_t>(0, ops.size() - 1)(rng);
    while (ops[where].find(slots[s]) != std::string::npos) where = (where + 1) % ops.size();
    ops[where] += slots[s];
  }
  std::string eq;
  for (const std::string& op : ops) eq += (eq.empty() ? "" : ",") + op;
  return {eq + "->" + output, sizes};
}

// Random networks of 7 to 10 operands: the exhaustive search finds the exact minimum, never above greedy's.
TEST(ContractionOrder, RandomNetworksGetTheExactMinimum) {
  std::mt19937 rng(11);
  for (int n = 7; n <= 10; ++n)
    for (int regularity = 2; regularity <= 4; ++regularity)
      for (int outputs : {0, 2}) {
        const auto [eq, sizes] = random_network(rng, n, regularity, outputs);
        SCOPED_TRACE(eq);
        const ResolvedEinSum r = resolved(eq, sizes);
        const ContractionOrder order = contraction_order(r);
        expect_valid(r, order);
        EXPECT_EQ(order.method, "exhaustive");
        const Oracle o = oracle_of(r);
        EXPECT_EQ(order.flops, exact_by_subsets(o.ops, o.output, sizes));
        EXPECT_LE(order.flops, greedy_contraction_order(r).flops);
      }
}

// 15 and 16 operands: the search over connected splits gives a valid order, never above greedy's.
TEST(ContractionOrder, SixteenOperandsByConnectedSplits) {
  std::mt19937 rng(12);
  for (int n : {15, 16})
    for (int regularity : {3, 6}) {
      const auto [eq, sizes] = random_network(rng, n, regularity, 2);
      SCOPED_TRACE(eq);
      const ResolvedEinSum r = resolved(eq, sizes);
      const ContractionOrder order = contraction_order(r);
      expect_valid(r, order);
      EXPECT_EQ(order.method, "dp");
      EXPECT_LE(order.flops, greedy_contraction_order(r).flops);
    }
}

// Beyond dp_operands the order is greedy, and still a valid decomposition; on a chain of matrices whose extents
// fall and rise, greedy joins through the small extents first.
TEST(ContractionOrder, LongChainsAreGreedy) {
  std::string eq;
  std::map<char, Extent> sizes;
  const std::string labels = "abcdefghijklmnopqrstuvwxyz";
  for (std::size_t k = 0; k + 1 < labels.size(); ++k) {
    eq += (eq.empty() ? "" : ",") + labels.substr(k, 2);
    sizes[labels[k]] = k % 3 == 1 ? 2 : 40;
  }
  sizes['z'] = 40;
  eq += "->az";
  const ResolvedEinSum r = resolved(eq, sizes);
  ASSERT_GT(r.arity(), dp_operands);
  const ContractionOrder order = contraction_order(r);
  EXPECT_EQ(order.method, "greedy");
  expect_valid(r, order);
  // Left to right would carry a 40 x 40 result through every step: 25 steps of up to 2·40·40·40 flops.
  EXPECT_LT(order.flops, 25 * 2.0 * 40 * 40 * 40);
}

// The planner's alternatives: contraction_order's order first, then the least flops + 64 × elements written
// ("combo") and the fewest elements written ("size"), each where it differs from those before; each the minimum of
// its measure over every pairwise order.
TEST(ContractionOrder, AlternativesMinimiseTheirOwnMeasure) {
  int alternatives = 0;
  std::vector<std::pair<std::string, std::map<char, Extent>>> cases;
  for (const std::string& eq : opt_einsum_expressions) cases.emplace_back(eq, opt_einsum_sizes);
  std::mt19937 rng(5);
  for (int n = 4; n <= 6; ++n)
    for (int regularity = 2; regularity <= 3; ++regularity)
      for (int outputs : {0, 2}) cases.push_back(random_network(rng, n, regularity, outputs));
  for (const auto& [eq, sizes] : cases) {
    SCOPED_TRACE(eq);
    const ResolvedEinSum r = resolved(eq, sizes);
    if (r.arity() > 7) continue;  // the brute force's reach
    const std::vector<ContractionOrder> orders = contraction_orders(r);
    ASSERT_GE(orders.size(), 1u);
    EXPECT_EQ(orders[0].flops, contraction_order(r).flops);
    EXPECT_EQ(orders[0].method, contraction_order(r).method);
    const Oracle o = oracle_of(r);
    for (std::size_t i = 1; i < orders.size(); ++i) {
      expect_valid(r, orders[i]);
      ASSERT_TRUE(orders[i].method == "combo" || orders[i].method == "size") << orders[i].method;
      const double weight = orders[i].method == "combo" ? 64 : 1e9;
      const double best = weighted_brute_force(o.ops, o.output, sizes, weight);
      EXPECT_NEAR(weighted_cost(orders[i].steps, o.ops, o.output, sizes, weight), best, 1e-12 * best);
      EXPECT_GE(orders[i].flops, orders[0].flops);
      for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(orders[i].steps == orders[j].steps) << "a repeated order";
      ++alternatives;
    }
  }
  EXPECT_GE(alternatives, 5);  // 6 with these cases: most expressions here have one order for all three measures
}

// Graph::with_order: the same vertices before and after the n-ary einsum, its steps in the other order.
TEST(ContractionOrder, GraphWithAnotherOrderKeepsEverythingElse) {
  Graph g;
  const VertexId a0 = g.input("A0", Dtype::f64, {16, 2048});
  const VertexId a1 = g.input("A1", Dtype::f64, {2048, 2048});
  const VertexId a2 = g.input("A2", Dtype::f64, {2048, 4096});
  const VertexId a3 = g.input("A3", Dtype::f64, {4096, 32});
  const VertexId v = g.einsum("ab,bc,cd,de->a", {a0, a1, a2, a3}, EinsumOptions{JoinOp::mul, AggOp::sum, {}, "V", {}});
  const VertexId w = g.einsum("a->", v, EinsumOptions{JoinOp::mul, AggOp::sum, {}, "W", {}});
  g.output(w);
  const NaryEinsum& n = g.nary_einsums().at(0);
  ASSERT_EQ(n.method, "exhaustive");
  const std::vector<ContractionOrder> orders =
      contraction_orders(resolved("ab,bc,cd,de->a", {{'a', 16}, {'b', 2048}, {'c', 2048}, {'d', 4096}, {'e', 32}}));
  ASSERT_GE(orders.size(), 2u);
  for (const ContractionOrder& order : orders) {
    SCOPED_TRACE(order.method);
    const Graph h = g.with_order(0, order);
    ASSERT_EQ(h.size(), g.size());
    EXPECT_EQ(h.nary_einsums().at(0).method, order.method);
    EXPECT_EQ(h.nary_einsums().at(0).flops, order.flops);
    EXPECT_EQ(h.nary_einsums().at(0).steps, n.steps);  // the same ids, computed another way
    for (VertexId u : {a0, a1, a2, a3, v, w}) {
      EXPECT_EQ(h.vertex(u).name, g.vertex(u).name);
      EXPECT_EQ(h.vertex(u).bound, g.vertex(u).bound);
      EXPECT_EQ(h.find(g.vertex(u).name), u);
    }
    EXPECT_EQ(h.vertex(w).inputs, std::vector<VertexId>{v});
    EXPECT_EQ(h.outputs(), g.outputs());
    // The steps read the operands as the order says: the first step joins two of A0..A3.
    const Vertex& first = h.vertex(n.steps.front());
    EXPECT_EQ(first.inputs,
              (std::vector<VertexId>{n.operands[order.steps[0].first], n.operands[order.steps[0].second]}));
  }
  EXPECT_NE(g.with_order(0, orders[1]).vertex(n.steps.front()).einsum->equation(),
            g.vertex(n.steps.front()).einsum->equation());
  EXPECT_THROW(g.with_order(0, ContractionOrder{}), Error);
  EXPECT_THROW(g.with_order(1, orders[0]), std::out_of_range);
}

}  // namespace
