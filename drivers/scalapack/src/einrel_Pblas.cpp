// PBLAS' pdgemm_/psgemm_, pdtran_/pstran_ and pdgeadd_/psgeadd_ computed by einrel (docs/c-fortran.md "Through
// ScaLAPACK"): where einrel takes a call (EINREL_SCALAPACK, the model of einrel_CallModel.hpp), the caller's
// block-cyclic blocks become einrel pieces of the operands (in place where a block is contiguous in the local
// array, else copied), the operation (an einsum) runs as an einrel::Program planned once per layout of its
// operands relative to the block grid, and alpha·result + beta·C is written back into C's local array. What
// einrel does not take goes to the routine this library stands in front of (ScaLAPACK's, found with
// dlsym(RTLD_NEXT)), so linking it never breaks a code.
#include <einrel_BlacsApi.hpp>
#include <einrel_BlockCyclic.hpp>
#include <einrel_CallModel.hpp>
#include <einrel_PlanCache.hpp>

#include <einrel.hpp>
#include <einrel_HostEnvironment.hpp>

#include <dlfcn.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einrel::scalapack {
namespace {

// A submatrix of a block-cyclic matrix: rows [i0, i0 + rows) and columns [j0, j0 + cols), 0-based.
struct Submatrix {
  Descriptor d;
  std::int64_t i0 = 0, j0 = 0, rows = 0, cols = 0;
};

// One call: C = alpha · einsum(inputs) + beta · C, the einsum over the C-order tensors of the stored
// submatrices' transposes (a stored r x c submatrix is the tensor [c, r]: a column-major block is the C-order
// block of the transpose), the inputs named A and B; m x n x k and ScaLAPACK's step along k as the model sees
// them (CallShape).
template <class S>
struct Operation {
  std::string equation;
  std::vector<Submatrix> inputs;
  std::vector<const S*> input_data;
  Submatrix output;
  S* output_data = nullptr;
  S alpha = 1, beta = 0;
  std::int64_t m = 0, n = 0, k = 0, panel = 1;
};

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

char upper(const char* c) { return static_cast<char>(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c); }

// Why einrel cannot take this call (the same on every process of the grid: only global arguments decide),
// or nothing.
template <class S>
std::optional<std::string> unsupported(const Operation<S>& op) {
  if (op.alpha == S(0) || op.output.rows <= 0 || op.output.cols <= 0) return "an empty operation";
  auto outside = [](const Submatrix& m) {
    return m.rows <= 0 || m.cols <= 0 || m.i0 < 0 || m.j0 < 0 || m.i0 + m.rows > m.d.m || m.j0 + m.cols > m.d.n;
  };
  for (const Submatrix& m : op.inputs) {
    if (m.d.ctxt != op.output.d.ctxt) return "operands on different BLACS contexts";
    if (outside(m)) return "an empty submatrix, or one outside its matrix";
  }
  if (outside(op.output)) return "an empty submatrix, or one outside its matrix";
  return std::nullopt;
}

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

// The call as the model sees it, from global arguments only.
template <class S>
CallShape shape_of(const Operation<S>& op, int nprow, int npcol) {
  CallShape call{op.m, op.n, op.k, op.panel, static_cast<std::int64_t>(sizeof(S)), nprow, npcol, op.beta == S(0), 0};
  std::vector<const Submatrix*> all{&op.output};
  for (const Submatrix& m : op.inputs) all.push_back(&m);
  for (const Submatrix* m : all) call.pieces += blocks_on_grid(m->d, m->i0, m->j0, m->rows, m->cols, nprow, npcol);
  return call;
}

// The cache key: what the plan depends on, which is each operand's layout relative to the block grid (its
// extents, block sizes, where in its first block it starts and which process holds that block), not where it
// is in its matrix, nor alpha, beta, the arrays or their leading dimensions. A factorization's updates at
// offsets a whole cycle of blocks apart share a plan.
template <class S>
PlanKey key_of(const Operation<S>& op, const Grid& grid, int space) {
  PlanKey key{static_cast<std::int64_t>(sizeof(S)), space, grid.id};
  key.insert(key.end(), op.equation.begin(), op.equation.end());
  std::vector<const Submatrix*> all{&op.output};
  for (const Submatrix& m : op.inputs) all.push_back(&m);
  for (const Submatrix* m : all)
    key.insert(key.end(), {m->rows, m->cols, m->d.mb, m->d.nb, m->i0 % m->d.mb, m->j0 % m->d.nb,
                           (m->i0 / m->d.mb + m->d.rsrc) % grid.nprow, (m->j0 / m->d.nb + m->d.csrc) % grid.npcol});
  return key;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", s);
  return text;
}

// The product for `key` on `grid`, kept or planned now, and whether einrel takes the call (false, with the
// reason in `why`, where planning is not expected to pay in auto mode).
template <class Exec, class S>
bool run_on(const Operation<S>& op, const Grid& grid, Mode mode, const CallCosts& costs, int space, std::string& why) {
  PlanCache& cache = state().products[grid.id];
  const PlanKey key = key_of(op, grid, space);
  const std::int64_t calls = cache.count_call(key);
  std::shared_ptr<void> product = cache.find(key);
  Timing timing;
  if (!product) {
    if (mode == Mode::automatic && !plan_pays(costs, calls)) {
      why = "planning it (" + seconds(costs.plan) + ") does not pay for " + std::to_string(calls) +
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
  why = "planned in " + seconds(timing.plan) + ", pieces " + seconds(timing.bind) + ", execute " +
        seconds(timing.execute) + " (kernels " + seconds(timing.kernels) + "), write-back " +
        seconds(timing.write_back) + "; " + std::to_string(cache.products()) + " product(s), " +
        std::to_string(cache.bytes() >> 20) + " MB kept";
  return true;
}

// Runs the operation on einrel where it takes it (true, with how it went in `why`), or says in `why` why
// it goes to ScaLAPACK instead (false).
template <class S>
bool run_on_einrel(const Operation<S>& op, std::string& why) {
  if (const auto no = unsupported(op)) {
    why = *no;
    return false;
  }
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  Cblacs_gridinfo(op.output.d.ctxt, &nprow, &npcol, &myrow, &mycol);
  if (myrow < 0 || mycol < 0) {
    why = "a process outside the grid";
    return false;
  }
  try {
    const Mode mode = mode_from_environment();
    if (mode == Mode::off) {
      why = "EINREL_SCALAPACK=off";
      return false;
    }
    const CallCosts costs = predict(shape_of(op, nprow, npcol), machine_from_environment(), EinrelOverheads{});
    if (mode == Mode::automatic && !einrel_may_win(costs)) {  // decided alike on every process, before any message
      why = "predicted " + seconds(costs.common + costs.scalapack) + " on ScaLAPACK, " +
            seconds(costs.common + costs.einrel_planned) + " on einrel";
      return false;
    }
    start();
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
    if (level >= MPI_THREAD_FUNNELED)
      return run_on<Kokkos::DefaultHostExecutionSpace, S>(op, grid, mode, costs, 0, why);
#ifdef KOKKOS_ENABLE_SERIAL
    return run_on<Kokkos::Serial, S>(op, grid, mode, costs, 1, why);
#else
    why = "MPI_THREAD_SINGLE without Kokkos' Serial backend";
    return false;
#endif
  } catch (const std::exception& e) {  // agreed on every rank of the grid by the program's collectives
    why = e.what();
    return false;
  }
}

// The routine of ScaLAPACK (or whatever follows this library) named `name`.
void* next_routine(const char* name) {
  static std::map<std::string, void*> found;
  const auto known = found.find(name);
  if (known != found.end()) return known->second;
  return found[name] = dlsym(RTLD_NEXT, name);
}

// Runs `op` on einrel, or else calls `name` after this library with `args`.
template <class S, class... Args>
void einrel_or_next(const char* name, const std::optional<Operation<S>>& op, std::string why, Args... args) {
  const char* verbose = std::getenv("EINREL_SCALAPACK_VERBOSE");
  // One line per call, from the grid's first process (every process of the grid decides the same).
  bool say = verbose && *verbose == '1';
  std::string call = name;
  if (op) {
    int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
    Cblacs_gridinfo(op->output.d.ctxt, &nprow, &npcol, &myrow, &mycol);
    say = say && myrow == 0 && mycol == 0;
    call += " " + describe(CallShape{op->m, op->n, op->k}) + " (" + std::string(dtype_name(dtype_of<S>())) + ", " +
            std::to_string(nprow) + "x" + std::to_string(npcol) + " grid)";
  }
  const double start = MPI_Wtime();
  if (op && run_on_einrel(*op, why)) {
    if (say)
      std::fprintf(stderr, "einrel_scalapack: %s on einrel: %s: %s\n", call.c_str(),
                   seconds(MPI_Wtime() - start).c_str(), why.c_str());
    return;
  }
  void* next = next_routine(name);
  if (!next) {
    std::fprintf(stderr, "einrel_scalapack: %s needs ScaLAPACK's %s (%s), and none is linked after einrel's\n", name,
                 name, why.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const double routed = MPI_Wtime();
  reinterpret_cast<void (*)(Args...)>(next)(args...);
  if (say)
    std::fprintf(stderr, "einrel_scalapack: %s on ScaLAPACK: %s (decided in %s): %s\n", call.c_str(),
                 seconds(MPI_Wtime() - routed).c_str(), seconds(routed - start).c_str(), why.c_str());
}

// The submatrix of `desc` at 1-based (i, j) with `rows` x `cols`, or nothing for a descriptor einrel does not
// read (not a dense matrix).
std::optional<Submatrix> submatrix(const int* desc, int i, int j, std::int64_t rows, std::int64_t cols) {
  Submatrix m{{}, i - 1, j - 1, rows, cols};
  if (!read_descriptor(desc, m.d)) return std::nullopt;
  return m;
}

// op(A) for transpose character t: "N" as stored, "T" or "C" (real) transposed; 0 for another character.
char transpose(const char* t) {
  const char c = upper(t);
  return c == 'N' || c == 'T' || c == 'C' ? (c == 'N' ? 'N' : 'T') : 0;
}

// C = alpha op(A) op(B) + beta C, over C[j, i] (C's stored m x n as its transposed tensor), A[l, i] or A[i, l],
// B[j, l] or B[l, j].
template <class S>
std::optional<Operation<S>> gemm_operation(const char* transa, const char* transb, int m, int n, int k, S alpha,
                                           const S* a, int ia, int ja, const int* desca, const S* b, int ib, int jb,
                                           const int* descb, S beta, S* c, int ic, int jc, const int* descc,
                                           std::string& why) {
  const char ta = transpose(transa), tb = transpose(transb);
  const auto sa = submatrix(desca, ia, ja, ta == 'N' ? m : k, ta == 'N' ? k : m);
  const auto sb = submatrix(descb, ib, jb, tb == 'N' ? k : n, tb == 'N' ? n : k);
  const auto sc = submatrix(descc, ic, jc, m, n);
  if (!ta || !tb) why = "a transpose argument other than N, T, C";
  if (!sa || !sb || !sc) why = "a descriptor that is not of a dense matrix";
  if (!why.empty()) return std::nullopt;
  return Operation<S>{std::string(ta == 'N' ? "li" : "il") + "," + (tb == 'N' ? "jl" : "lj") + "->ji",
                      {*sa, *sb},
                      {a, b},
                      *sc,
                      c,
                      alpha,
                      beta,
                      m,
                      n,
                      k,
                      ta == 'N' ? sa->d.nb : sa->d.mb};  // ScaLAPACK steps along op(A)'s column blocks
}

// C = alpha op(A) + beta C: op(A) = A is A[j, i] -> C[j, i]; op(A) = A^T is A[i, j] -> C[j, i].
template <class S>
std::optional<Operation<S>> add_operation(char t, int m, int n, S alpha, const S* a, int ia, int ja, const int* desca,
                                          S beta, S* c, int ic, int jc, const int* descc, std::string& why) {
  const auto sa = submatrix(desca, ia, ja, t == 'N' ? m : n, t == 'N' ? n : m);
  const auto sc = submatrix(descc, ic, jc, m, n);
  if (!t) why = "a transpose argument other than N, T, C";
  if (!sa || !sc) why = "a descriptor that is not of a dense matrix";
  if (!why.empty()) return std::nullopt;
  return Operation<S>{t == 'N' ? "ji->ji" : "ij->ji", {*sa}, {a}, *sc, c, alpha, beta, m, n, 0, 1};
}

}  // namespace
}  // namespace einrel::scalapack

extern "C" {

using einrel::scalapack::add_operation;
using einrel::scalapack::einrel_or_next;
using einrel::scalapack::gemm_operation;
using einrel::scalapack::transpose;

void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc) {
  std::string why;
  const auto op = gemm_operation(transa, transb, *m, *n, *k, *alpha, a, *ia, *ja, desca, b, *ib, *jb, descb, *beta, c,
                                 *ic, *jc, descc, why);
  einrel_or_next("pdgemm_", op, why, transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic,
                 jc, descc);
}

void psgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
             const float* a, const int* ia, const int* ja, const int* desca, const float* b, const int* ib,
             const int* jb, const int* descb, const float* beta, float* c, const int* ic, const int* jc,
             const int* descc) {
  std::string why;
  const auto op = gemm_operation(transa, transb, *m, *n, *k, *alpha, a, *ia, *ja, desca, b, *ib, *jb, descb, *beta, c,
                                 *ic, *jc, descc, why);
  einrel_or_next("psgemm_", op, why, transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic,
                 jc, descc);
}

// sub(C) = beta sub(C) + alpha sub(A)^T, sub(C) m x n.
void pdtran_(const int* m, const int* n, const double* alpha, const double* a, const int* ia, const int* ja,
             const int* desca, const double* beta, double* c, const int* ic, const int* jc, const int* descc) {
  std::string why;
  const auto op = add_operation('T', *m, *n, *alpha, a, *ia, *ja, desca, *beta, c, *ic, *jc, descc, why);
  einrel_or_next("pdtran_", op, why, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
}

void pstran_(const int* m, const int* n, const float* alpha, const float* a, const int* ia, const int* ja,
             const int* desca, const float* beta, float* c, const int* ic, const int* jc, const int* descc) {
  std::string why;
  const auto op = add_operation('T', *m, *n, *alpha, a, *ia, *ja, desca, *beta, c, *ic, *jc, descc, why);
  einrel_or_next("pstran_", op, why, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
}

// sub(C) = beta sub(C) + alpha op(sub(A)), sub(C) m x n.
void pdgeadd_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* ia,
              const int* ja, const int* desca, const double* beta, double* c, const int* ic, const int* jc,
              const int* descc) {
  std::string why;
  const auto op = add_operation(transpose(trans), *m, *n, *alpha, a, *ia, *ja, desca, *beta, c, *ic, *jc, descc, why);
  einrel_or_next("pdgeadd_", op, why, trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
}

void psgeadd_(const char* trans, const int* m, const int* n, const float* alpha, const float* a, const int* ia,
              const int* ja, const int* desca, const float* beta, float* c, const int* ic, const int* jc,
              const int* descc) {
  std::string why;
  const auto op = add_operation(transpose(trans), *m, *n, *alpha, a, *ia, *ja, desca, *beta, c, *ic, *jc, descc, why);
  einrel_or_next("psgeadd_", op, why, trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
}

}  // extern "C"
