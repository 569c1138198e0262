// The part of libeinrel_scalapack that computes with einrel (docs/c-fortran.md "Through ScaLAPACK"), loaded by
// libeinrel_scalapack.so with dlopen the first time its model gives einrel a call: a program that leaves every
// call to ScaLAPACK loads neither it nor Kokkos. Here the caller's block-cyclic blocks become einrel pieces of the
// operands (in place where a block is contiguous in the local array, else copied), the operation (an einsum)
// runs as an einrel::Program planned once per layout of its operands relative to the block grid, and
// alpha·result + beta·C is written back into C's local array.
#include <einrel_BlacsApi.hpp>
#include <einrel_PblasCall.hpp>
#include <einrel_PlanCache.hpp>

#include <einrel.hpp>
#include <einrel_HostEnvironment.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace einrel::scalapack {
namespace {

// The BLACS grid of a context as an MPI communicator of its processes, in row-major grid order; made once per
// grid, collectively over the grid's processes only.
struct Grid {
  MPI_Comm comm = MPI_COMM_NULL;
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  std::int64_t id = 0;  // its place among the grids made
};

// What stays until MPI_Finalize: the grids and, per grid (by id), the planned products (freed by the attribute
// callback below, before Kokkos is finalized).
struct State {
  std::map<std::vector<int>, Grid> grids;  // by context, shape and process numbers (contexts are reused)
  std::map<std::int64_t, PlanCache> products;
  bool registered = false;
};

State& state() {
  static State s;
  return s;
}

int release_state(MPI_Comm, int, void*, void*) {
  State& s = state();
  s.products.clear();
  for (auto& [ctxt, grid] : s.grids)
    if (grid.comm != MPI_COMM_NULL) MPI_Comm_free(&grid.comm);
  s.grids.clear();
  return MPI_SUCCESS;
}

// Kokkos (started here when the caller has not) and this library's state, both released when MPI finalizes
// (the state first: MPI_Finalize deletes MPI_COMM_SELF's attributes last set first).
void start() {
  start_kokkos_until_mpi_finalize();
  State& s = state();
  if (s.registered) return;
  int keyval = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_state, &keyval, nullptr) != MPI_SUCCESS ||
      MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr) != MPI_SUCCESS || MPI_Comm_free_keyval(&keyval) != MPI_SUCCESS)
    throw Error("cannot register einrel's ScaLAPACK state with MPI_Finalize");
  s.registered = true;
}

// Collective over the grid's processes (one BLACS sum): the MPI_COMM_WORLD rank of every grid position, in
// row-major order, which BLACS does not expose (its process numbers are positions in its own communicator),
// and in `illegal_processes` how many processes of the grid pass true as `illegal_here` (the same sum carries
// it, so that agreeing on a call costs no second collective).
const Grid& grid_of(int ctxt, bool illegal_here, int& illegal_processes) {
  Grid g;
  Cblacs_gridinfo(ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  const int positions = g.nprow * g.npcol;
  std::vector<int> ranks(static_cast<std::size_t>(positions) + 1, 0);  // then the count of illegal calls
  MPI_Comm_rank(MPI_COMM_WORLD, &ranks[static_cast<std::size_t>(g.myrow * g.npcol + g.mycol)]);
  ranks.back() = illegal_here ? 1 : 0;
  Cigsum2d(ctxt, "All", " ", positions + 1, 1, ranks.data(), positions + 1, -1, -1);
  illegal_processes = ranks.back();
  ranks.pop_back();
  std::vector<int> key{ctxt, g.nprow, g.npcol};
  key.insert(key.end(), ranks.begin(), ranks.end());
  State& s = state();
  const auto known = s.grids.find(key);
  if (known != s.grids.end()) return known->second;
  MPI_Group world, members;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &members);
  const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, members, 0x5ca1, &g.comm);
  MPI_Group_free(&members);
  MPI_Group_free(&world);
  if (rc != MPI_SUCCESS) throw Error("cannot make a communicator of the BLACS grid of context " + std::to_string(ctxt));
  g.id = static_cast<std::int64_t>(s.grids.size());
  return s.grids.emplace(key, g).first->second;
}

// One operand's blocks on this process for one call, as einrel pieces of the tensor [cols, rows] of its
// submatrix: a block contiguous in the caller's local array (all of its rows, or one column) is used there in
// place where the call allows; any other is a copy, which stays for the next call with the same layout.
template <class S, class Memory>
class Operand {
 public:
  using Piece = LocalPiece<S, Memory>;

  // `input`: the copies are packed from the local array; `in_place`: contiguous blocks may be used in place.
  std::vector<Piece> bind(const Submatrix& m, const Grid& g, S* local, bool input, bool in_place) {
    blocks_ = local_blocks(m.d, m.i0, m.j0, m.rows, m.cols, g.myrow, g.mycol, g.nprow, g.npcol);
    if (copies_.size() < blocks_.size()) copies_.resize(blocks_.size());
    in_place_.assign(blocks_.size(), false);
    std::vector<Piece> out;
    for (std::size_t p = 0; p < blocks_.size(); ++p) {
      const LocalBlock& b = blocks_[p];
      const Box box{{b.col - m.j0, b.row - m.i0}, {b.col - m.j0 + b.cols, b.row - m.i0 + b.rows}};
      const auto size = static_cast<std::size_t>(b.rows * b.cols);
      S* at = local + b.local_row + b.local_col * m.d.lld;
      in_place_[p] = in_place && (b.rows == m.d.lld || b.cols == 1);
      if (!in_place_[p]) {
        if (copies_[p].size < size) copies_[p] = Copy{std::unique_ptr<S[]>(new S[size]), size};  // not zeroed
        if (input) pack(b, at, m.d.lld, copies_[p].data.get());
      }
      out.push_back({box, typename Piece::view_type(in_place_[p] ? at : copies_[p].data.get(), size)});
    }
    return out;
  }

  // local = alpha · copy + beta · local for the blocks bound as copies (beta = 0: local is not read).
  void write_back(S* local, std::int64_t lld, S alpha, S beta) const {
    for (std::size_t p = 0; p < blocks_.size(); ++p) {
      if (in_place_[p]) continue;
      const LocalBlock& b = blocks_[p];
      for (std::int64_t c = 0; c < b.cols; ++c) {
        S* to = local + b.local_row + (b.local_col + c) * lld;
        const S* from = copies_[p].data.get() + c * b.rows;
        for (std::int64_t r = 0; r < b.rows; ++r)
          to[r] = beta == S(0) ? alpha * from[r] : alpha * from[r] + beta * to[r];
      }
    }
  }

 private:
  static void pack(const LocalBlock& b, const S* at, std::int64_t lld, S* copy) {
    for (std::int64_t c = 0; c < b.cols; ++c)
      std::memcpy(copy + c * b.rows, at + c * lld, static_cast<std::size_t>(b.rows) * sizeof(S));
  }

  struct Copy {
    std::unique_ptr<S[]> data;
    std::size_t size = 0;
  };
  std::vector<LocalBlock> blocks_;
  std::vector<Copy> copies_;
  std::vector<bool> in_place_;
};

// Seconds of one einrel call's parts, for EINREL_SCALAPACK_VERBOSE.
struct Timing {
  double plan = 0, bind = 0, execute = 0, kernels = 0, write_back = 0;  // kernels: inside execute
};

double now() { return MPI_Wtime(); }

// One planned operation on a grid: its program and its operands' copies, for any call whose operands have
// the same layout relative to the block grid (key_of).
template <class Exec, class S>
class Planned {
  using Memory = typename Exec::memory_space;

 public:
  Planned(const Operation<S>& op, const Grid& g)
      : program_(g.comm, graph(op), options()), inputs_(op.inputs.size()), procs_(g.nprow * g.npcol) {}

  // What this product holds per process, the same on every process of the grid: the dry run's peak (the
  // largest of any rank's) and the operands' copies and einrel layouts.
  std::size_t bytes(const Operation<S>& op) const {
    const auto& peaks = program_.estimate().peak_memory_bytes;
    std::size_t elements = static_cast<std::size_t>(op.output.rows * op.output.cols);
    for (const Submatrix& m : op.inputs) elements += static_cast<std::size_t>(m.rows * m.cols);
    const std::size_t peak = peaks.empty() ? 0 : *std::max_element(peaks.begin(), peaks.end());
    return peak + 2 * sizeof(S) * elements / static_cast<std::size_t>(procs_);
  }

  void run(const Operation<S>& op, const Grid& g, Timing& timing) {
    double t = now();
    for (std::size_t k = 0; k < inputs_.size(); ++k)
      program_.template set_input<S>(name(k),
                                     inputs_[k].bind(op.inputs[k], g, const_cast<S*>(op.input_data[k]), true, true));
    program_.template set_output<S>(
        "C", output_.bind(op.output, g, op.output_data, false, op.alpha == S(1) && op.beta == S(0)));
    timing.bind = now() - t;
    t = now();
    for (const engine::VertexMeasure& v : program_.execute().vertices) timing.kernels += v.kernel_seconds;
    timing.execute = now() - t;
    t = now();
    output_.write_back(op.output_data, op.output.d.lld, op.alpha, op.beta);
    timing.write_back = now() - t;
  }

 private:
  static std::string name(std::size_t k) { return std::string(1, static_cast<char>('A' + k)); }
  // Warming a product's memory before its first execution (Session::prepare) costs more than it saves for a
  // call made once or a few times.
  static engine::Options options() {
    engine::Options o;
    o.warm_memory = false;
    return o;
  }
  static Graph graph(const Operation<S>& op) {
    Graph g;
    std::vector<VertexId> inputs;
    for (std::size_t k = 0; k < op.inputs.size(); ++k)
      inputs.push_back(g.input(name(k), dtype_of<S>(), Bound{op.inputs[k].cols, op.inputs[k].rows}));
    EinsumOptions named;
    named.name = "C";
    g.output(g.einsum(op.equation, inputs, named));
    return g;
  }

  Program<Exec> program_;
  std::vector<Operand<S, Memory>> inputs_;
  Operand<S, Memory> output_;
  int procs_;
};
// Why this process finds a descriptor of `op` illegal on its grid (illegal_on), or an empty string. The grid's
// processes agree on it before taking the call (grid_of): ScaLAPACK then takes it on every process and reports
// it as it does, where a process-local verdict (the leading dimension is each process's own) would send some
// processes into einrel's collectives and others into ScaLAPACK's.
template <class S>
std::string illegal_here(const Operation<S>& op, int nprow, int npcol, int myrow) {
  std::string mine = illegal_on(op.output.d, nprow, npcol, myrow);
  for (const Submatrix& m : op.inputs)
    if (mine.empty()) mine = illegal_on(m.d, nprow, npcol, myrow);
  return mine;
}
// The cache key: what the plan depends on, which is each operand's layout relative to the block grid (its
// extents, block sizes, where in its first block it starts and which process holds that block), not where it
// is in its matrix, nor alpha, beta, the arrays or their leading dimensions. A factorization's updates at
// offsets a whole cycle of blocks apart share a plan.
template <class S>
PlanKey key_of(const Operation<S>& op, const Grid& grid, int space) {
  PlanKey key{static_cast<std::int64_t>(sizeof(S)), space, grid.id};
  for (const char* c = op.equation; *c; ++c) key.push_back(*c);
  std::vector<const Submatrix*> all{&op.output};
  for (const Submatrix& m : op.inputs) all.push_back(&m);
  for (const Submatrix* m : all)
    key.insert(key.end(), {m->rows, m->cols, m->d.mb, m->d.nb, m->i0 % m->d.mb, m->j0 % m->d.nb,
                           (m->i0 / m->d.mb + m->d.rsrc) % grid.nprow, (m->j0 / m->d.nb + m->d.csrc) % grid.npcol});
  return key;
}
// The product for `key` on `grid`, kept or planned now, and whether einrel takes the call (false, with the
// reason in `why`, where planning is not expected to pay in auto mode).
template <class Exec, class S>
bool run_on(const Operation<S>& op, const Grid& grid, bool on, const CallCosts& costs, int space, std::string& why) {
  PlanCache& cache = state().products[grid.id];
  const PlanKey key = key_of(op, grid, space);
  const std::int64_t calls = cache.count_call(key);
  std::shared_ptr<void> product = cache.find(key);
  Timing timing;
  if (!product) {
    if (!on && !plan_pays(costs, calls)) {
      why = "planning it (" + seconds_text(costs.plan) + ") does not pay for " + std::to_string(calls) +
            " call(s) with this layout";
      return false;
    }
    const double t = now();
    auto planned = std::make_shared<Planned<Exec, S>>(op, grid);
    timing.plan = now() - t;
    cache.keep(key, planned, planned->bytes(op));
    product = planned;  // held through the call even where the cache dropped it at once
  }
  static_cast<Planned<Exec, S>*>(product.get())->run(op, grid, timing);
  why = "planned in " + seconds_text(timing.plan) + ", pieces " + seconds_text(timing.bind) + ", execute " +
        seconds_text(timing.execute) + " (kernels " + seconds_text(timing.kernels) + "), write-back " +
        seconds_text(timing.write_back) + "; " + std::to_string(cache.products()) + " product(s), " +
        std::to_string(cache.bytes() >> 20) + " MB kept";
  return true;
}
// Takes the call on einrel's side (run_on), once the grid's processes agree that its descriptors are legal.
template <class S>
bool run_in_engine(const Operation<S>& op, bool on, const CallCosts& costs, std::string& why) {
  try {
    start();
    int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
    Cblacs_gridinfo(op.output.d.ctxt, &nprow, &npcol, &myrow, &mycol);
    const std::string mine = illegal_here(op, nprow, npcol, myrow);
    int illegal = 0;
    const Grid& grid = grid_of(op.output.d.ctxt, !mine.empty(), illegal);
    if (illegal > 0) {
      why = mine.empty() ? "an illegal descriptor on another process of the grid" : "an illegal descriptor: " + mine;
      return false;
    }
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    // A code that asked MPI for one thread runs einrel on one thread per process too.
    if (level >= MPI_THREAD_FUNNELED) return run_on<Kokkos::DefaultHostExecutionSpace, S>(op, grid, on, costs, 0, why);
#ifdef KOKKOS_ENABLE_SERIAL
    return run_on<Kokkos::Serial, S>(op, grid, on, costs, 1, why);
#else
    why = "MPI_THREAD_SINGLE without Kokkos' Serial backend";
    return false;
#endif
  } catch (const std::exception& e) {  // agreed on every rank of the grid by the program's collectives
    why = e.what();
    return false;
  }
}

}  // namespace
}  // namespace einrel::scalapack

extern "C" {

bool einrel_scalapack_engine_f64(const einrel::scalapack::Operation<double>* op, bool on,
                                 const einrel::scalapack::CallCosts* costs, std::string* why) {
  return einrel::scalapack::run_in_engine(*op, on, *costs, *why);
}

bool einrel_scalapack_engine_f32(const einrel::scalapack::Operation<float>* op, bool on,
                                 const einrel::scalapack::CallCosts* costs, std::string* why) {
  return einrel::scalapack::run_in_engine(*op, on, *costs, *why);
}

}  // extern "C"
