#include <einrel_ContractionOrder.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>

namespace einrel {

namespace {

double elements(const ResolvedEinSum& r, const std::string& labels) {
  double n = 1;
  for (char c : labels) n *= static_cast<double>(r.extent(c));
  return n;
}

// The labels of a pair's result: those of `pair` (the two operands' labels, concatenated) that `needed`
// says the output or another remaining operand holds, once each, in order of first appearance.
template <class Needed>
std::string pair_result(const std::string& pair, Needed&& needed) {
  std::string labels;
  for (char c : pair)
    if (labels.find(c) == std::string::npos && needed(c)) labels += c;
  return labels;
}

// The current list of operands' labels as steps consume it: the slot of a result, the step that makes it.
struct StepList {
  std::vector<std::string> labels;
  std::vector<NaryStep> steps;

  // Joins slots a and b (in either order) into `result`; the result takes the lower slot.
  void join(std::size_t a, std::size_t b, std::string result) {
    const std::size_t first = std::min(a, b), second = std::max(a, b);
    steps.push_back({first, second, result});
    labels[first] = std::move(result);
    labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(second));
  }
};

// ---- Exact search over subsets (up to dp_operands operands, at most 64 labels) ----

using Mask = std::uint64_t;    // a set of labels, by position in the resolved EinSum's unique labels
using Subset = std::uint32_t;  // a set of operands

// (C++17: no <bit>)
int lowest_bit(std::uint64_t m) { return __builtin_ctzll(m); }
bool single(Subset s) { return (s & (s - 1)) == 0; }

class SubsetSearch {
 public:
  // `written_weight`: what each element of an intermediate written costs beside the flops (0: flops alone).
  SubsetSearch(const ResolvedEinSum& r, bool all_splits, double written_weight = 0)
      : r_(r), n_(r.arity()), full_((Subset{1} << n_) - 1), written_weight_(written_weight) {
    const std::string& unique = r.unique_labels();
    for (std::size_t l = 0; l < unique.size(); ++l) extent_.push_back(static_cast<double>(r.extent(unique[l])));
    for (std::size_t byte = 0; byte < byte_size_.size(); ++byte)
      for (std::size_t bits = 0; bits < 256; ++bits) {
        double p = 1;
        for (std::size_t b = 0; b < 8; ++b)
          if ((bits >> b & 1) != 0 && 8 * byte + b < extent_.size()) p *= extent_[8 * byte + b];
        byte_size_[byte][bits] = p;
      }
    const EinSum& e = r.einsum();
    std::vector<Mask> operand(n_);
    for (std::size_t k = 0; k < n_; ++k) operand[k] = mask_of(e.inputs[k]);
    const Mask output = mask_of(e.output);
    // The labels of every subset, then those its result keeps: what the output or the other operands hold
    // (a single operand is itself; the whole set is the output).
    std::vector<Mask> all(full_ + 1, 0);
    for (Subset s = 1; s <= full_; ++s) all[s] = all[s & (s - 1)] | operand[lowest_bit(s)];
    kept_.assign(full_ + 1, 0);
    for (Subset s = 1; s <= full_; ++s) kept_[s] = single(s) ? all[s] : all[s] & (output | all[full_ ^ s]);
    search(all, all_splits);
  }

  // The pairs of the best order found, children before their parent.
  std::vector<std::pair<Subset, Subset>> pairs() const {
    std::vector<std::pair<Subset, Subset>> out;
    collect(full_, out);
    return out;
  }
  // Whether the result of joining subset s keeps `label` (the output or an operand outside s holds it).
  bool keeps(Subset s, char label) const { return (kept_[s] & mask_of(std::string(1, label))) != 0; }

 private:
  Mask mask_of(const std::string& labels) const {
    Mask m = 0;
    for (char c : labels) m |= Mask{1} << r_.unique_labels().find(c);
    return m;
  }
  // The product of the extents of a label set, by byte: eight table lookups instead of a loop over its labels
  // (the search's inner loop costs a pair at every split).
  double size(Mask m) const {
    double s = 1;
    for (std::size_t byte = 0; m != 0; ++byte, m >>= 8) s *= byte_size_[byte][m & 0xff];
    return s;
  }

  void search(const std::vector<Mask>& all, bool all_splits) {
    constexpr double none = std::numeric_limits<double>::infinity();
    best_.assign(full_ + 1, none);
    split_.assign(full_ + 1, 0);
    for (std::size_t k = 0; k < n_; ++k) best_[Subset{1} << k] = 0;
    // A subset's proper subsets are smaller numbers: every split is costed before the subsets it makes.
    for (Subset s = 1; s <= full_; ++s) {
      if (single(s)) continue;
      const Subset low = s & (~s + 1), rest = s ^ low;
      // a holds the lowest operand and b the rest; ties go to the first split in this order (a smallest).
      for (Subset sub = 0; sub != rest; sub = (sub - rest) & rest) {
        const Subset a = low | sub, b = s ^ a;
        const double base = best_[a] + best_[b];
        // Without all splits, only operands sharing a label are joined (so only connected subsets get an
        // order, and each connected group is searched by itself).
        if (base < best_[s] && (all_splits || (all[a] & all[b]) != 0)) {
          const Mask pair = kept_[a] | kept_[b];
          const double flops = base + size(pair) * ((pair & ~kept_[s]) != 0 ? 2 : 1) +
                               (written_weight_ > 0 ? written_weight_ * size(kept_[s]) : 0);
          if (flops < best_[s]) {
            best_[s] = flops;
            split_[s] = a;
          }
        }
      }
    }
    if (best_[full_] < none) return;
    join_groups(all);
  }

  // Joins the connected groups of operands, each already ordered, smallest result first.
  void join_groups(const std::vector<Mask>& all) {
    std::vector<Subset> groups;
    Subset left = full_;
    while (left != 0) {
      Subset group = left & (~left + 1);
      for (bool grew = true; grew;) {
        grew = false;
        for (Subset k = left & ~group; k != 0; k &= k - 1) {
          const Subset one = k & (~k + 1);
          if ((all[one] & all[group]) != 0) {
            group |= one;
            grew = true;
          }
        }
      }
      groups.push_back(group);
      left &= ~group;
    }
    while (groups.size() > 1) {
      std::stable_sort(groups.begin(), groups.end(),
                       [&](Subset x, Subset y) { return size(kept_[x]) < size(kept_[y]); });
      const Subset joined = groups[0] | groups[1];
      split_[joined] = groups[0];
      groups.erase(groups.begin(), groups.begin() + 2);
      groups.insert(groups.begin(), joined);
    }
  }

  void collect(Subset s, std::vector<std::pair<Subset, Subset>>& out) const {
    if (single(s)) return;
    const Subset a = split_[s], b = s ^ a;
    collect(a, out);
    collect(b, out);
    out.emplace_back(a, b);
  }

  const ResolvedEinSum& r_;
  std::size_t n_;
  Subset full_;
  double written_weight_;
  std::vector<double> extent_;
  std::array<std::array<double, 256>, 8> byte_size_{};
  std::vector<Mask> kept_;
  std::vector<double> best_;
  std::vector<Subset> split_;
};

std::vector<NaryStep> subset_order(const ResolvedEinSum& r, bool all_splits, double written_weight = 0) {
  const SubsetSearch search(r, all_splits, written_weight);
  const EinSum& e = r.einsum();
  StepList list{e.inputs, {}};
  std::vector<Subset> slot;  // the operands each slot holds
  for (std::size_t k = 0; k < r.arity(); ++k) slot.push_back(Subset{1} << k);
  const auto pairs = search.pairs();
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    const Subset a = pairs[p].first, b = pairs[p].second;  // (a lambda below uses them: no structured binding)
    const auto ia = static_cast<std::size_t>(std::find(slot.begin(), slot.end(), a) - slot.begin());
    const auto ib = static_cast<std::size_t>(std::find(slot.begin(), slot.end(), b) - slot.begin());
    const std::size_t first = std::min(ia, ib), second = std::max(ia, ib);
    const bool last = p + 1 == pairs.size();
    list.join(first, second, last ? e.output : pair_result(list.labels[first] + list.labels[second], [&](char c) {
                return search.keeps(a | b, c);
              }));
    slot[first] = a | b;
    slot.erase(slot.begin() + static_cast<std::ptrdiff_t>(second));
  }
  return list.steps;
}

}  // namespace

ContractionOrder costed_order(const ResolvedEinSum& resolved, std::vector<NaryStep> steps) {
  ContractionOrder order;
  std::vector<std::string> labels = resolved.einsum().inputs;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const NaryStep& step = steps[s];
    if (step.first >= step.second || step.second >= labels.size())
      throw Error("contraction order: step " + std::to_string(s + 1) + " joins operands " + std::to_string(step.first) +
                  " and " + std::to_string(step.second) + " of " + std::to_string(labels.size()));
    const std::string pair = pair_result(labels[step.first] + labels[step.second], [](char) { return true; });
    const bool aggregates =
        std::any_of(pair.begin(), pair.end(), [&](char c) { return step.labels.find(c) == std::string::npos; });
    order.flops += elements(resolved, pair) * (aggregates ? 2 : 1);
    if (s + 1 < steps.size())
      order.largest_intermediate = std::max(order.largest_intermediate, elements(resolved, step.labels));
    labels[step.first] = step.labels;
    labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(step.second));
  }
  order.steps = std::move(steps);
  return order;
}

ContractionOrder greedy_contraction_order(const ResolvedEinSum& resolved) {
  const EinSum& e = resolved.einsum();
  const std::size_t n = resolved.arity();
  // Nodes are the operands, then the results in the order they are made; holders[c] the nodes with label c.
  std::vector<std::string> node = e.inputs;
  std::vector<bool> live(n, true);
  std::array<std::vector<std::size_t>, 128> holders;
  std::array<int, 128> count{};  // live nodes holding each label
  auto hold = [&](std::size_t id, int delta) {
    for (char c : pair_result(node[id], [](char) { return true; })) {
      const auto u = static_cast<unsigned char>(c);
      count[u] += delta;
      if (delta > 0) holders[u].push_back(id);
    }
  };
  for (std::size_t k = 0; k < n; ++k) hold(k, 1);
  auto result_of = [&](std::size_t a, std::size_t b) {
    return pair_result(node[a] + node[b], [&](char c) {
      const auto u = static_cast<unsigned char>(c);
      const int in_pair = (node[a].find(c) != std::string::npos) + (node[b].find(c) != std::string::npos);
      return e.output.find(c) != std::string::npos || count[u] > in_pair;
    });
  };
  auto removed = [&](std::size_t a, std::size_t b) {
    return elements(resolved, result_of(a, b)) - elements(resolved, node[a]) - elements(resolved, node[b]);
  };
  // Candidate pairs sharing a label, fewest elements first; a popped candidate whose cost has changed since
  // (an operand holding one of its labels was joined away) goes back with its new cost.
  using Candidate = std::tuple<double, std::size_t, std::size_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> candidates;
  auto offer = [&](std::size_t id) {
    for (char c : pair_result(node[id], [](char) { return true; }))
      for (std::size_t other : holders[static_cast<unsigned char>(c)])
        if (other != id && live[other])
          candidates.emplace(removed(id, other), std::min(id, other), std::max(id, other));
  };
  for (std::size_t k = 0; k < n; ++k) offer(k);

  StepList list{e.inputs, {}};
  std::vector<std::size_t> slot(n);  // the node in each slot of the current list
  for (std::size_t k = 0; k < n; ++k) slot[k] = k;
  auto join = [&](std::size_t a, std::size_t b, std::string result) {
    const auto ia = static_cast<std::size_t>(std::find(slot.begin(), slot.end(), a) - slot.begin());
    const auto ib = static_cast<std::size_t>(std::find(slot.begin(), slot.end(), b) - slot.begin());
    hold(a, -1);
    hold(b, -1);
    live[a] = live[b] = false;
    node.push_back(result);
    live.push_back(true);
    hold(node.size() - 1, 1);
    slot[std::min(ia, ib)] = node.size() - 1;
    slot.erase(slot.begin() + static_cast<std::ptrdiff_t>(std::max(ia, ib)));
    list.join(ia, ib, std::move(result));
  };
  while (slot.size() > 2) {
    std::size_t a = 0, b = 0;
    bool found = false;
    while (!candidates.empty() && !found) {
      const auto [cost, x, y] = candidates.top();
      candidates.pop();
      if (!live[x] || !live[y]) continue;
      const double now = removed(x, y);
      if (now != cost) {
        candidates.emplace(now, x, y);
        continue;
      }
      a = x;
      b = y;
      found = true;
    }
    if (!found) {  // no two operands share a label: join the two smallest
      std::vector<std::size_t> by_size = slot;
      std::stable_sort(by_size.begin(), by_size.end(), [&](std::size_t x, std::size_t y) {
        return elements(resolved, node[x]) < elements(resolved, node[y]);
      });
      a = std::min(by_size[0], by_size[1]);
      b = std::max(by_size[0], by_size[1]);
    }
    join(a, b, result_of(a, b));
    offer(node.size() - 1);
  }
  if (slot.size() == 2) list.join(0, 1, e.output);
  ContractionOrder order = costed_order(resolved, std::move(list.steps));
  order.method = "greedy";
  return order;
}

ContractionOrder contraction_order(const ResolvedEinSum& resolved) {
  const std::size_t n = resolved.arity();
  if (n > dp_operands || resolved.unique_labels().size() > 64) return greedy_contraction_order(resolved);
  const bool exhaustive = n <= exhaustive_operands;
  ContractionOrder order = costed_order(resolved, subset_order(resolved, exhaustive));
  order.method = exhaustive ? "exhaustive" : "dp";
  return order;
}

std::vector<ContractionOrder> contraction_orders(const ResolvedEinSum& resolved) {
  std::vector<ContractionOrder> orders{contraction_order(resolved)};
  if (resolved.arity() > alternative_operands || resolved.unique_labels().size() > 64) return orders;
  // opt_einsum's "combo" weighs an element written as 64 flops; the second weight makes the elements written
  // the measure and the flops a tie-break.
  const std::pair<double, const char*> weights[] = {{64, "combo"}, {1e9, "size"}};
  for (const auto& [weight, method] : weights) {
    ContractionOrder order = costed_order(resolved, subset_order(resolved, true, weight));
    order.method = method;
    const bool seen =
        std::any_of(orders.begin(), orders.end(), [&](const ContractionOrder& o) { return o.steps == order.steps; });
    if (!seen) orders.push_back(std::move(order));
  }
  return orders;
}

}  // namespace einrel
