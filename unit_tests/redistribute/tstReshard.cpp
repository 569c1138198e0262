// Meshes, distributed types and the synthesis of redistributions by collectives
// (array-redistribution-collectives.txt), pure: no MPI.
#include <einrel_Error.hpp>
#include <einrel_MeshState.hpp>
#include <einrel_Reshard.hpp>
#include <einrel_ReshardVolumes.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace {

using namespace einrel;
using namespace einrel::redistribute;
using namespace einrel::redistribute::mesh;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string describe(const ReshardPlan& plan) {
  std::string s = str(plan.from, plan.mesh) + " -> " + str(plan.to, plan.mesh) + " on " + plan.mesh.str() + "\n";
  for (const ReshardStep& step : plan.steps) {
    s += "  " + std::string(collective_name(step.op)) + " axes";
    for (const auto& a : step.axes) s += " " + a;
    s += " dims";
    for (auto d : step.dims) s += " " + std::to_string(d);
    s += " -> " + str(step.after, plan.primes) + " cost " + std::to_string(step.cost) + "\n";
  }
  return s + "  cost " + std::to_string(plan.cost) + " height " + std::to_string(plan.memory_height) + " naive " +
         std::to_string(plan.naive_cost);
}

TEST(DeviceMesh, ParsesAxesMinorFirstAndFactorsThemIntoPrimes) {
  const DeviceMesh mesh = DeviceMesh::parse("x=4, y=6");
  EXPECT_EQ(mesh.size(), 24);
  EXPECT_EQ(mesh.str(), "x=4,y=6");
  EXPECT_EQ(mesh.coordinates(5), (std::vector<int>{1, 1}));
  EXPECT_EQ(mesh.rank_of({3, 5}), 23);
  EXPECT_EQ(mesh.prime_factored().str(), "x.0=2,x.1=2,y.0=2,y.1=3");
  EXPECT_EQ(DeviceMesh::parse("a=7,b=1").prime_factored().str(), "a=7");
  // ranks keep their coordinates: the coordinate on x is x.0 + 2·x.1
  const DeviceMesh primes = mesh.prime_factored();
  for (int r = 0; r < 24; ++r) {
    const auto c = mesh.coordinates(r), p = primes.coordinates(r);
    EXPECT_EQ(c[0], p[0] + 2 * p[1]);
    EXPECT_EQ(c[1], p[2] + 2 * p[3]);
  }
  EXPECT_EQ(prime_factors(360), (std::vector<Extent>{2, 2, 2, 3, 3, 5}));
}

TEST(DeviceMesh, ErrorsAreOneLineWithTheColumn) {
  EXPECT_EQ(error_of([] { DeviceMesh::parse("x=4,x=2"); }), "mesh:1:5: mesh axis 'x' is named twice");
  EXPECT_EQ(error_of([] { DeviceMesh::parse("x4"); }), "mesh:1:3: expected '=' after the axis name, found end of text");
  EXPECT_EQ(error_of([] { DeviceMesh::parse("x=0"); }), "mesh:1:1: mesh axis 'x' needs a size from 1 to 2^20");
  EXPECT_EQ(error_of([] { DeviceMesh::parse("x=2;y=3"); }), "mesh:1:4: expected end of text, found ';'");
  EXPECT_EQ(error_of([] { DeviceMesh::parse("x=2,\x1c"); }), "mesh:1:5: expected an axis name, found '\\x1c'");
  // Found by fuzzing: the number of devices overflowed an int (fuzz/regressions/dist_type/crash-*).
  EXPECT_EQ(error_of([] { DeviceMesh::parse("x=65536,y=32768"); }),
            "the mesh x=65536,y=32768 has more devices than MPI has ranks (at most 2^31 - 1)");
  EXPECT_EQ(DeviceMesh::parse("x=65536,y=32767").size(), 65536 * 32767);
}

TEST(DistType, ParsesThePapersNotationAndPendingReductions) {
  const DeviceMesh mesh = DeviceMesh::parse("x=4,y=6");
  const DistType t = parse_dist_type("[3{x}12, 2{y}12]", mesh, "--from");
  EXPECT_EQ(local_shape(t, mesh), (std::vector<Extent>{3, 2}));
  EXPECT_EQ(str(t, mesh), "[3{x}12,2{y}12]");
  const DistType u = parse_dist_type("[1{y,x}24, 12]", mesh, "--from");
  EXPECT_EQ(u.dims[0].axes, (std::vector<std::string>{"y", "x"}));
  // minor first: tile index i_y + 6·i_x
  EXPECT_EQ(tile_offset(u, mesh, {2, 5}), (std::vector<Extent>{5 + 6 * 2, 0}));
  const DistType p = parse_dist_type("[12, 3{x}12] max{y}", mesh, "--to");
  EXPECT_EQ(p.partial, (std::vector<std::string>{"y"}));
  EXPECT_EQ(p.partial_op, AggOp::max);
  EXPECT_EQ(str(p, mesh), "[12,3{x}12] max{y}");
  EXPECT_EQ(parse_dist_type("[12{}12]", mesh, "t"), parse_dist_type("[12]", mesh, "t"));
  EXPECT_EQ(str(prime_factored(t, mesh), mesh.prime_factored()), "[3{x.0,x.1}12,2{y.0,y.1}12]");
}

TEST(DistType, ErrorsNameTheProblemAndColumn) {
  const DeviceMesh mesh = DeviceMesh::parse("x=4,y=6");
  auto err = [&](const std::string& text) { return error_of([&] { parse_dist_type(text, mesh, "--from"); }); };
  EXPECT_EQ(err("[3{x}12,2{y}12"), "--from:1:15: expected ']' or ',' after a dimension, found end of text");
  EXPECT_EQ(err("[3{z}12]"), "--from:1:4: unknown mesh axis 'z' (the mesh is x=4,y=6)");
  EXPECT_EQ(err("[4{x}12]"), "--from:1:2: tile 4 is not 12 over axes {x} of total size 4");
  EXPECT_NE(err("[5{y}20]").find("gives uneven tiles"), std::string::npos);
  EXPECT_EQ(err("[3{x}12,3{x}12]"), "--from:1:11: mesh axis 'x' is used twice in the type");
  EXPECT_EQ(err("[12] sum{x,x}"), "--from:1:12: mesh axis 'x' is used twice in the type");
  EXPECT_EQ(err("[3{x}12,2{y}10]").rfind("--from:1:9: extent 10 over axes {y} of total size 6 gives uneven tiles", 0),
            0u);
  EXPECT_EQ(err("[12] mean{x}"), "--from:1:6: unknown reduction 'mean' (expected sum, max, min, prod)");
  EXPECT_EQ(err("3{x}12"), "--from:1:1: expected '[' to open the type, found '3'");
  // against the array's global shape: at the dimension that differs
  auto err_to = [&](const std::string& text) {
    return error_of([&] { parse_dist_type(text, mesh, "--to", std::vector<Extent>{12, 12}); });
  };
  EXPECT_EQ(err_to("[2{y}12, 6{x}24]"),
            "--to:1:10: global extent 24 of dimension 1 is not the array's 12 (global shape [12,12])");
  EXPECT_EQ(err_to("[12]"), "--to:1:4: ends after 1 of the array's 2 dimensions (global shape [12,12])");
  EXPECT_EQ(err_to("[12,12,1]"), "--to:1:8: dimension 2 is beyond the array's 2 dimensions (global shape [12,12])");
  EXPECT_EQ(err_to("[ 12 ]"), "--to:1:6: ends after 1 of the array's 2 dimensions (global shape [12,12])");
  EXPECT_EQ(err_to("[12, 3{x}12]"), "");
  EXPECT_EQ(err("[3{x}12, 2{z}12]"), "--from:1:12: unknown mesh axis 'z' (the mesh is x=4,y=6)");
}

// The steps are the paper's collectives on the tile shapes (each legal), cost and height add up, and a
// simulation of every rank's tile ends on the target.
void expect_valid(const ReshardPlan& plan) {
  SCOPED_TRACE(describe(plan));
  MeshState state(plan.primes, prime_factored(plan.from, plan.mesh));
  DistType target = prime_factored(plan.to, plan.mesh);
  Extent cost = 0, height = plan.source_local_size;
  int permutes = 0;
  for (const ReshardStep& s : plan.steps) {
    const std::vector<Extent> before = local_shape(state.type(), plan.primes);
    Extent factor = 1;
    for (const std::string& a : s.axes) factor *= plan.primes.axis_size(a);
    std::vector<Extent> expect = before;
    switch (s.op) {
      case Collective::allgather:
        expect[s.dims[0]] *= factor;
        state.allgather(s.dims[0], s.axes);
        break;
      case Collective::dynslice:
        ASSERT_EQ(before[s.dims[0]] % factor, 0);
        expect[s.dims[0]] /= factor;
        state.dynslice(s.dims[0], s.axes);
        break;
      case Collective::alltoall:
        ASSERT_EQ(before[s.dims[1]] % factor, 0);
        expect[s.dims[0]] *= factor;
        expect[s.dims[1]] /= factor;
        state.alltoall(s.dims[0], s.dims[1], s.axes);
        break;
      case Collective::reducescatter:
        expect[s.dims[0]] /= factor;
        state.reduce_scatter(s.dims[0], s.axes);
        break;
      case Collective::allreduce:
        state.allreduce(s.axes);
        break;
      case Collective::allpermute:
        ++permutes;
        state.permute_to(s.after);
        break;
    }
    EXPECT_EQ(s.local_shape, expect);
    EXPECT_EQ(state.type(), s.after);
    cost += s.cost;
    height = std::max(height, num_elements(s.local_shape));
  }
  EXPECT_TRUE(state.holds(target));
  EXPECT_LE(permutes, 1);
  EXPECT_EQ(cost, plan.cost);
  EXPECT_EQ(height, plan.memory_height);
  EXPECT_LE(plan.memory_height, std::max(plan.source_local_size, plan.target_local_size));
}

ReshardPlan plan_of(const std::string& mesh, const std::string& from, const std::string& to) {
  const DeviceMesh m = DeviceMesh::parse(mesh);
  return synthesize_reshard(m, parse_dist_type(from, m, "--from"), parse_dist_type(to, m, "--to"));
}

// Example 3.1: no full gather; two alltoalls over the prime factors, no intermediate permutation.
TEST(Reshard, Example3_1WithoutAFullGather) {
  const ReshardPlan plan = plan_of("x=4,y=6", "[3{x}12,2{y}12]", "[2{y}12,3{x}12]");
  expect_valid(plan);
  EXPECT_EQ(plan.memory_height, 6);
  EXPECT_LE(plan.cost, 2 * 6 + 6);
  EXPECT_EQ(plan.naive_cost, 24 + 144);  // gather x: 12·2, then y: 12·12
}

// Example 4.9 / 7.1: one alltoall over all three prime factors of a, no permutation.
TEST(Reshard, Example4_9IsOneAlltoall) {
  const ReshardPlan plan = plan_of("a=8", "[1{a}8,8]", "[8,1{a}8]");
  expect_valid(plan);
  ASSERT_EQ(plan.steps.size(), 1u) << describe(plan);
  EXPECT_EQ(plan.steps[0].op, Collective::alltoall);
  EXPECT_EQ(user_axes(plan.steps[0].axes, plan.mesh), (std::vector<std::string>{"a"}));
  EXPECT_EQ(plan.cost, 8);
}

// Where the cheapest weak path needs a final permutation, another of the cheapest ones does not: the
// synthesizer lowers both (here two alltoalls, cost 128, rather than two alltoalls and an allpermute, 192).
TEST(Reshard, AnotherWeakPathAvoidsThePermutation) {
  const ReshardPlan plan = plan_of("x=2,y=2", "[2{x,y}8,4,8]", "[8,2{y}4,4{x}8]");
  expect_valid(plan);
  EXPECT_EQ(plan.cost, 128) << describe(plan);
  for (const ReshardStep& s : plan.steps) EXPECT_NE(s.op, Collective::allpermute) << describe(plan);
}

// Fig. 12: over-partitioning on the replicated axis z makes the alltoalls cheaper: 384 instead of 512.
TEST(Reshard, Figure12OverPartitions) {
  const ReshardPlan plan = plan_of("x=4,y=2,z=4", "[1{y,x}8,8,8,4]", "[8,4{y}8,2{x}8,4]");
  expect_valid(plan);
  EXPECT_EQ(plan.cost, 384);
}

}  // namespace

namespace {

// The optimum of the paper's model, found independently of the synthesizer: Dijkstra over syntactic types
// on the prime-factored mesh with the typing rules of Fig. 8 (multi-axis, §7.1: allgather and alltoall move
// the minor-most axes of a dimension) and allpermute to any type of the same local shape, every type within
// the memory height.
class ReferenceSearch {
 public:
  using Key = std::vector<std::vector<std::string>>;

  ReferenceSearch(const DeviceMesh& primes, const DistType& from)
      : primes_(primes), from_(from), height_(local_size(from, primes)) {}

  Extent cheapest(const DistType& to) {
    height_ = std::max(height_, local_size(to, primes_));
    relax(key(from_), 0);
    while (!queue_.empty()) {
      const auto [c, k] = *queue_.begin();
      queue_.erase(queue_.begin());
      if (k == key(to)) return c;
      const std::vector<Extent> shape = local_shape(type_of(k), primes_);
      for (std::size_t i = 0; i < k.size(); ++i) {
        gathers_and_alltoalls(k, i, c, shape);
        dynslices(k, i, c, shape[i]);
      }
      for (const Key& p : same_shape(shape)) relax(p, c + num_elements(shape));  // allpermute
    }
    return -1;
  }

 private:
  static Key key(const DistType& t) {
    Key k;
    for (const DistDim& d : t.dims) k.push_back(d.axes);
    return k;
  }
  DistType type_of(const Key& k) const {
    DistType t = from_;
    for (std::size_t i = 0; i < k.size(); ++i) t.dims[i].axes = k[i];
    return t;
  }

  void relax(const Key& k, Extent c) {
    if (local_size(type_of(k), primes_) > height_) return;
    const auto it = dist_.find(k);
    if (it != dist_.end() && it->second <= c) return;
    if (it != dist_.end()) queue_.erase({it->second, k});
    dist_[k] = c;
    queue_.insert({c, k});
  }

  // allgather of the n minor-most axes of dimension i (cost: the local size after), or alltoall of them to
  // another dimension j whose tile they divide (cost: the local size before).
  void gathers_and_alltoalls(const Key& k, std::size_t i, Extent c, const std::vector<Extent>& shape) {
    const Extent size = num_elements(shape);
    Extent moved = 1;
    for (std::size_t n = 1; n <= k[i].size(); ++n) {
      moved *= primes_.axis_size(k[i][n - 1]);
      Key g = k;
      g[i].erase(g[i].begin(), g[i].begin() + static_cast<std::ptrdiff_t>(n));
      relax(g, c + size * moved);
      for (std::size_t j = 0; j < k.size(); ++j)
        if (j != i && shape[j] % moved == 0) {
          Key a = g;
          a[j].insert(a[j].begin(), k[i].begin(), k[i].begin() + static_cast<std::ptrdiff_t>(n));
          relax(a, c + size);
        }
    }
  }

  // dynslice: any ordered sequence of free axes whose product divides the tile (free).
  void dynslices(const Key& k, std::size_t i, Extent c, Extent tile) {
    std::set<std::string> busy;
    for (const auto& d : k) busy.insert(d.begin(), d.end());
    std::vector<std::string> seq;
    std::function<void(Extent)> slice = [&](Extent product) {
      if (!seq.empty()) {
        Key d = k;
        d[i].insert(d[i].begin(), seq.begin(), seq.end());
        relax(d, c);
      }
      for (const MeshAxis& a : primes_.axes())
        if (!busy.count(a.name) && tile % (product * a.size) == 0) {
          busy.insert(a.name);
          seq.push_back(a.name);
          slice(product * a.size);
          seq.pop_back();
          busy.erase(a.name);
        }
    };
    slice(1);
  }

  // Every syntactic type with the local shape `shape` (the targets of an allpermute).
  std::vector<Key> same_shape(const std::vector<Extent>& shape) const {
    std::vector<Key> out;
    Key k(shape.size());
    std::set<std::string> used;
    std::function<void(std::size_t, Extent)> fill = [&](std::size_t i, Extent rest) {
      if (i == shape.size()) {
        out.push_back(k);
        return;
      }
      if (rest == 1) {
        fill(i + 1, i + 1 < shape.size() ? from_.dims[i + 1].global / shape[i + 1] : 1);
        return;
      }
      for (const MeshAxis& a : primes_.axes())
        if (!used.count(a.name) && rest % a.size == 0) {
          used.insert(a.name);
          k[i].push_back(a.name);
          fill(i, rest / a.size);
          k[i].pop_back();
          used.erase(a.name);
        }
    };
    if (!shape.empty()) fill(0, from_.dims[0].global / shape[0]);
    return out;
  }

  const DeviceMesh& primes_;
  const DistType from_;
  Extent height_;
  std::map<Key, Extent> dist_;
  std::set<std::pair<Extent, Key>> queue_;
};

Extent reference_optimum(const DeviceMesh& primes, const DistType& from, const DistType& to) {
  return ReferenceSearch(primes, from).cheapest(to);
}

// What a synthesized sequence moves per rank, and the temporaries its execution holds at once (what the
// engine's dry run counts for a transition by collectives).
TEST(ReshardVolumes, CollectivesCountWhatTheirMembersExchange) {
  const DeviceMesh mesh = DeviceMesh::parse("x=2,y=2");
  auto plan_of = [&](const char* from, const char* to) {
    return synthesize_reshard(mesh, parse_dist_type(from, mesh, "from"), parse_dist_type(to, mesh, "to"));
  };
  const ReshardPlan gather = plan_of("[4{x,y}16]", "[16]");  // one allgather over both axes
  ASSERT_EQ(gather.steps.size(), 1u) << describe(gather);
  EXPECT_EQ(reshard_volumes(gather).sent.all(), std::vector<Extent>(4, 12));
  EXPECT_EQ(reshard_volumes(gather).received.all(), std::vector<Extent>(4, 12));
  EXPECT_EQ(reshard_temporaries(gather), std::vector<std::vector<Extent>>{{16}});  // the gathered tiles
  const ReshardPlan scatter = plan_of("[16] sum{x}", "[8{x}16]");
  ASSERT_EQ(scatter.steps.size(), 1u) << describe(scatter);
  EXPECT_EQ(scatter.steps[0].op, Collective::reducescatter);
  EXPECT_EQ(reshard_volumes(scatter).received.all(), std::vector<Extent>(4, 8));
  EXPECT_EQ(reshard_temporaries(scatter), std::vector<std::vector<Extent>>{{16}});  // the packed send buffer
  // cheaper in the paper's model than two allgathers (80 against 96): an alltoall, then one allgather
  const ReshardPlan two = plan_of("[8{x}16,2{y}4]", "[16,4]");
  ASSERT_EQ(two.steps.size(), 2u) << describe(two);
  EXPECT_EQ(two.steps[0].op, Collective::alltoall) << describe(two);
  EXPECT_EQ(two.steps[1].op, Collective::allgather) << describe(two);
  EXPECT_EQ(reshard_volumes(two).sent.all(), std::vector<Extent>(4, 8 + 48));
  // the alltoall: its result (not the last) and its send and receive buffers; the allgather: its input (the
  // alltoall's result) and its gathered buffer
  EXPECT_EQ(reshard_temporaries(two), (std::vector<std::vector<Extent>>{{16, 16, 16}, {16, 64}}));
  EXPECT_EQ(reshard_scratch(two), (std::vector<Extent>{16, 16, 16, 64}));  // pool buffers covering both
  const ReshardPlan stay = plan_of("[8{x}16]", "[8{x}16]");
  EXPECT_EQ(reshard_volumes(stay).sent.all(), std::vector<Extent>(4, 0));
  EXPECT_TRUE(reshard_temporaries(stay).empty());
  EXPECT_TRUE(reshard_scratch(stay).empty());
  // a permutation moves the whole tile of the ranks that change tiles only
  // a permutation moves the tiles of the ranks that change tiles only: (x, y) = (1, 0) and (0, 1)
  const ReshardPlan swap = plan_of("[8{x}16,2{y}4]", "[8{y}16,2{x}4]");
  ASSERT_EQ(swap.steps.size(), 1u) << describe(swap);
  EXPECT_EQ(swap.steps[0].op, Collective::allpermute);
  EXPECT_EQ(reshard_volumes(swap).sent.all(), (std::vector<Extent>{0, 16, 16, 0}));
  EXPECT_EQ(reshard_volumes(swap).received.all(), (std::vector<Extent>{0, 16, 16, 0}));
}

// With nodes of n ranks (rank r on node r / n), the off-node part of `v` (reshard_volumes of `plan`) step by
// step: a collective step's share of every member of a group with ranks on two nodes (groups listed by
// MeshState::group, as the MPI lowering forms them), an allpermute's tile where source and target differ in
// node; and steps_across_nodes flags the steps with such a group or pair.
void expect_node_split(const ReshardPlan& plan, const ExchangeVolumes& v, int n) {
  const ExchangeVolumes split = reshard_volumes(plan, n);
  ASSERT_EQ(split.sent, v.sent);
  ASSERT_EQ(split.received, v.received);
  const int R = static_cast<int>(v.sent.size());
  std::vector<Extent> sent(R, 0), received(R, 0);
  std::vector<bool> across;
  MeshState state(plan.primes, prime_factored(plan.from, plan.mesh));
  ReshardPlan prefix = plan;  // its first s steps
  prefix.steps.clear();
  ExchangeVolumes before = reshard_volumes(prefix);
  for (const ReshardStep& step : plan.steps) {
    prefix.steps.push_back(step);
    const ExchangeVolumes after = reshard_volumes(prefix);
    if (step.op == Collective::allgather || step.op == Collective::alltoall)
      state.bring_to_front(step.dims[0], step.axes);
    bool any = false;
    for (int r = 0; r < R; ++r) {
      const Extent out = after.sent[r] - before.sent[r], in = after.received[r] - before.received[r];
      bool off = false;
      if (step.op == Collective::allpermute) {
        const int source = state.permutation_sources(step.after)[r];
        off = source != r && source / n != r / n;
        if (off) received[r] += in, sent[source] += in;
      } else if (step.op != Collective::dynslice) {
        for (int m : state.group(r, step.axes)) off = off || m / n != r / n;
        if (off) sent[r] += out, received[r] += in;
      }
      any = any || off;
    }
    across.push_back(any);
    advance(state, step);
    before = after;
  }
  EXPECT_EQ(split.sent_off_node.all(), sent) << describe(plan) << " nodes of " << n;
  EXPECT_EQ(split.received_off_node.all(), received) << describe(plan) << " nodes of " << n;
  EXPECT_EQ(steps_across_nodes(plan, n), across) << describe(plan) << " nodes of " << n;
}

// Random problems like the paper's §8 (scaled down): meshes of 1-3 axes, tensors of 1-4 dimensions, each axis
// replicating or partitioning a random dimension, in random order.
TEST(Reshard, RandomProblemsAreLegalAndNearOptimal) {
  std::mt19937 rng(20261123);
  const std::vector<int> sizes{1, 2, 3, 4, 5, 6, 8};
  double slowest = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<MeshAxis> axes;
    const int naxes = 1 + static_cast<int>(rng() % 3);
    for (int a = 0; a < naxes; ++a)
      axes.push_back({std::string(1, static_cast<char>('x' + a)), sizes[rng() % sizes.size()]});
    const DeviceMesh mesh(axes);
    const int rank = 1 + static_cast<int>(rng() % 4);
    auto random_type = [&] {
      DistType t;
      for (int d = 0; d < rank; ++d)
        t.dims.push_back({static_cast<Extent>(mesh.size()) * static_cast<Extent>(1 + rng() % 2), {}});
      for (const MeshAxis& a : axes) {
        const int d = static_cast<int>(rng() % (rank + 1));
        if (d == rank) continue;
        auto& list = t.dims[d].axes;
        list.insert(list.begin() + static_cast<std::ptrdiff_t>(rng() % (list.size() + 1)), a.name);
      }
      return t;
    };
    DistType from = random_type(), to = random_type();
    for (int d = 0; d < rank; ++d) to.dims[d].global = from.dims[d].global;
    const ReshardPlan plan = synthesize_reshard(mesh, from, to);
    slowest = std::max(slowest, plan.synthesis_seconds);
    expect_valid(plan);
    const ExchangeVolumes v = reshard_volumes(plan);  // what one rank sends, another receives
    EXPECT_EQ(v.sent.sum(), v.received.sum()) << describe(plan);
    expect_node_split(plan, v, 1 + static_cast<int>(rng() % static_cast<unsigned>(mesh.size())));
    if (plan.primes.axes().size() <= 4 && rank <= 3) {
      const Extent optimum = reference_optimum(plan.primes, prime_factored(from, mesh), prime_factored(to, mesh));
      ASSERT_GE(optimum, 0);
      EXPECT_LE(plan.cost, optimum + plan.target_local_size) << describe(plan);
    }
  }
  std::cout << "slowest synthesis: " << slowest * 1e3 << " ms\n";
}

}  // namespace

namespace {

// Block layouts that are distributed types are recognized on the prime-factored mesh of the ranks, and
// block_layout gives them back; others (several blocks on a rank, a rank without a block, an index that is
// no digit of the rank, uneven tiles) are not.
TEST(DistType, BlockLayoutsOfTypesAreRecognized) {
  const DeviceMesh mesh = DeviceMesh::parse("r=8").prime_factored();  // r.0 (minor), r.1, r.2
  auto check_round_trip = [&](const redistribute::BlockLayout& layout) {
    const auto type = as_dist_type(layout, mesh);
    ASSERT_TRUE(type) << to_string(layout.grid().parts());
    EXPECT_EQ(block_layout(*type, mesh), layout) << str(*type, mesh);
  };
  // the engine's spread layout at p = R: C order, so the last dimension takes the rank's minor digits
  const redistribute::BlockLayout spread(BlockGrid({16, 8}, {2, 4}), 8);
  check_round_trip(spread);
  EXPECT_EQ(str(*as_dist_type(spread, mesh), mesh), "[8{r.2}16,2{r.0,r.1}8]");
  check_round_trip(redistribute::BlockLayout(BlockGrid({16, 8}, {1, 1}), redistribute::Placement::replicated(1, 8)));
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {  // random types over the binary mesh
    DistType t{{{8, {}}, {16, {}}, {4, {}}}, {}, AggOp::sum};
    for (const MeshAxis& a : mesh.axes()) {
      const int d = static_cast<int>(rng() % 4);
      if (d < 3) t.dims[d].axes.insert(t.dims[d].axes.begin() + rng() % (t.dims[d].axes.size() + 1), a.name);
    }
    const auto back = as_dist_type(block_layout(t, mesh), mesh);
    ASSERT_TRUE(back) << str(t, mesh);
    EXPECT_EQ(block_layout(*back, mesh), block_layout(t, mesh)) << str(t, mesh);
  }
  EXPECT_FALSE(as_dist_type(redistribute::BlockLayout(BlockGrid({16, 8}, {4, 4}), 8), mesh));  // 2 blocks a rank
  EXPECT_FALSE(as_dist_type(redistribute::BlockLayout(BlockGrid({16, 8}, {2, 2}), 8), mesh));  // idle ranks
  EXPECT_FALSE(as_dist_type(redistribute::BlockLayout(BlockGrid({15, 8}, {2, 4}), 8), mesh));  // uneven
  std::vector<int> owner{0, 3, 1, 2, 4, 5, 6, 7};  // block index not a digit of the rank
  EXPECT_FALSE(as_dist_type(
      redistribute::BlockLayout(BlockGrid({16, 8}, {2, 4}), redistribute::Placement::owners(owner, 8)), mesh));
}

// MeshState's device map against a model that keeps every rank's coordinates (the paper's φ′, renumbered rank by rank
// at each bring_to_front): on meshes of 2^k ranks, where renumberings only swap axes of equal sizes and the state keeps
// no per-rank coordinates, and on meshes that mix primes, where it keeps them. Every rank's tile, its collective
// groups, and whether it holds each of a set of types agree with the model's.
TEST(MeshState, DeviceMapsAgreeWithEveryRanksCoordinates) {
  std::mt19937 rng(17);
  for (const char* text : {"r=16", "r=32", "r=12", "x=2,y=6", "r=18"}) {
    const DeviceMesh mesh = DeviceMesh::parse(text).prime_factored();
    const int R = mesh.size();
    const std::size_t naxes = mesh.axes().size();
    for (int trial = 0; trial < 20; ++trial) {
      DistType t{{{2304, {}}, {1152, {}}}, {}, AggOp::sum};  // 2^8·9 and 2^7·9: any axes divide them
      for (const MeshAxis& a : mesh.axes()) {
        const std::size_t d = rng() % 3;
        if (d < 2) t.dims[d].axes.insert(t.dims[d].axes.begin() + rng() % (t.dims[d].axes.size() + 1), a.name);
      }
      MeshState state(mesh, t);
      std::vector<std::vector<int>> coords(R);  // the model: every rank's coordinate on each axis
      for (int r = 0; r < R; ++r) coords[r] = mesh.coordinates(r);
      auto index_along = [&](const std::vector<std::string>& axes, int r) {
        Extent index = 0, place = 1;
        for (const std::string& a : axes) {
          const std::size_t k = *mesh.find(a);
          index += place * coords[r][k];
          place *= mesh.axes()[k].size;
        }
        return index;
      };
      for (int step = 0; step < 4; ++step) {
        const std::size_t d = rng() % 2;
        std::vector<std::string> list = state.type().dims[d].axes;
        if (list.empty()) continue;
        std::shuffle(list.begin(), list.end(), rng);
        list.resize(1 + rng() % list.size());
        std::vector<std::string> order = list;  // the model's renumbering: the tile index in the new order
        for (const std::string& a : state.type().dims[d].axes)
          if (std::find(list.begin(), list.end(), a) == list.end()) order.push_back(a);
        for (int r = 0; r < R; ++r) {
          Extent index = index_along(state.type().dims[d].axes, r);
          for (const std::string& a : order) {
            const std::size_t k = *mesh.find(a);
            coords[r][k] = static_cast<int>(index % mesh.axes()[k].size);
            index /= mesh.axes()[k].size;
          }
        }
        state.bring_to_front(d, list);
        ASSERT_EQ(state.type().dims[d].axes, order);
        for (int r = 0; r < R; ++r) {
          std::vector<Extent> want;
          for (const DistDim& dim : state.type().dims)
            want.push_back(tile_extent(dim, mesh) * index_along(dim.axes, r));
          want.push_back(0);
          ASSERT_EQ(state.placement(r), want) << text << " rank " << r << " step " << step;
          ASSERT_EQ(state.position(r, order), index_along(order, r));
        }
        const std::vector<std::string> axes{mesh.axes()[rng() % naxes].name};
        for (int r = 0; r < R; ++r) {
          std::vector<int> group;
          for (int s = 0; s < R; ++s) {
            bool same = true;
            for (std::size_t k = 0; k < naxes; ++k)
              same = same && (mesh.axes()[k].name == axes[0] || coords[s][k] == coords[r][k]);
            if (same) group.push_back(s);
          }
          std::sort(group.begin(), group.end(),
                    [&](int a, int b) { return index_along(axes, a) < index_along(axes, b); });
          ASSERT_EQ(state.group(r, axes), group);
        }
      }
      // holds: the model's tiles against those the candidate type gives each rank at its own coordinates
      std::vector<DistType> candidates{state.type(), t};
      DistType swapped = state.type();
      std::swap(swapped.dims[0].axes, swapped.dims[1].axes);
      if (local_shape(swapped, mesh) == local_shape(t, mesh)) candidates.push_back(swapped);
      for (const DistType& c : candidates) {
        const MeshState identity(mesh, c);
        bool all = true;
        for (int r = 0; r < R && all; ++r) {
          std::vector<Extent> have;
          for (const DistDim& dim : state.type().dims)
            have.push_back(tile_extent(dim, mesh) * index_along(dim.axes, r));
          have.push_back(0);
          all = have == identity.placement(r);
        }
        EXPECT_EQ(state.holds(c), all) << text << " " << str(state.type(), mesh) << " holds " << str(c, mesh);
        if (local_shape(c, mesh) != local_shape(state.type(), mesh)) continue;
        // permutation_sources: a permutation whose every source holds, by the model, the tile its rank needs
        const std::vector<int> sources = state.permutation_sources(c);
        std::vector<int> sorted = sources;
        std::sort(sorted.begin(), sorted.end());
        for (int r = 0; r < R; ++r) {
          ASSERT_EQ(sorted[r], r);
          std::vector<Extent> held;
          for (const DistDim& dim : state.type().dims)
            held.push_back(tile_extent(dim, mesh) * index_along(dim.axes, sources[r]));
          held.push_back(0);
          EXPECT_EQ(held, identity.placement(r)) << text << " rank " << r;
        }
      }
    }
  }
}

// tile_ids gives every rank the id of the tile tile_key names, in C order over the type's parts; tile_id one rank's.
TEST(DistType, TileIdsAreTheTileKeysOfEveryRank) {
  std::mt19937 rng(19);
  for (const char* text : {"r=8", "r=12", "x=2,y=3"}) {
    const DeviceMesh mesh = DeviceMesh::parse(text).prime_factored();
    for (int trial = 0; trial < 20; ++trial) {
      DistType t{{{24, {}}, {72, {}}, {48, {}}}, {}, AggOp::sum};
      for (const MeshAxis& a : mesh.axes()) {
        const std::size_t d = rng() % 4;
        if (d < 3) t.dims[d].axes.insert(t.dims[d].axes.begin() + rng() % (t.dims[d].axes.size() + 1), a.name);
      }
      std::vector<Extent> parts;
      for (const DistDim& d : t.dims) {
        Extent n = 1;
        for (const std::string& a : d.axes) n *= mesh.axis_size(a);
        parts.push_back(n);
      }
      const BlockGrid grid({24, 72, 48}, parts);
      const std::vector<Extent> ids = tile_ids(t, mesh);
      ASSERT_EQ(ids.size(), static_cast<std::size_t>(mesh.size()));
      for (int r = 0; r < mesh.size(); ++r) {
        EXPECT_EQ(ids[r], grid.id(tile_key(t, mesh, r))) << str(t, mesh);
        EXPECT_EQ(tile_id(tile_weights(t, mesh), mesh, r), ids[r]) << str(t, mesh);
      }
    }
  }
}

}  // namespace
