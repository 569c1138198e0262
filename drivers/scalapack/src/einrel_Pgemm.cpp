// pdgemm_ and psgemm_ computed by einrel (docs/c-fortran.md "Through ScaLAPACK's pdgemm_"): the caller's
// block-cyclic pieces are copied into einrel pieces of the operands, the product is planned once per set of
// descriptors on the BLACS grid's processes and run by einrel::Program, and alpha·product + beta·C is written
// back into C's local array. What einrel does not take goes to the routine this library stands in front of
// (ScaLAPACK's, found with dlsym(RTLD_NEXT)), so linking it never breaks a code.
#include <einrel_BlockCyclic.hpp>

#include <einrel.hpp>
#include <einrel_HostEnvironment.hpp>

#include <dlfcn.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

extern "C" {
void Cblacs_gridinfo(int ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cigsum2d(int ctxt, const char* scope, const char* top, int m, int n, int* a, int lda, int rdest, int cdest);
}

namespace einrel::scalapack {
namespace {

template <class S>
using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const S*, const S*, const int*,
                      const int*, const int*, const S*, const int*, const int*, const int*, const S*, S*, const int*,
                      const int*, const int*);

// One call's arguments, 0-based offsets.
template <class S>
struct Call {
  char transa, transb;
  std::int64_t m, n, k;
  S alpha, beta;
  const S *a, *b;
  S* c;
  std::int64_t ia, ja, ib, jb, ic, jc;
  Descriptor da, db, dc;
};

// The BLACS grid of a context as an MPI communicator of its processes, in row-major grid order; made once per
// grid, collectively over the grid's processes only.
struct Grid {
  MPI_Comm comm = MPI_COMM_NULL;
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  std::int64_t id = 0;  // its place among the grids made
};

// What stays until MPI_Finalize: the grids and the planned products (freed by the attribute callback below,
// before Kokkos is finalized).
struct State {
  std::map<std::vector<int>, Grid> grids;  // by context, shape and process numbers (contexts are reused)
  std::map<std::vector<std::int64_t>, std::shared_ptr<void>> products;
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

// Collective over the grid's processes (a BLACS sum): the MPI_COMM_WORLD rank of every grid position, in
// row-major order, which BLACS does not expose (its process numbers are positions in its own communicator).
const Grid& grid_of(int ctxt) {
  Grid g;
  Cblacs_gridinfo(ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  const int positions = g.nprow * g.npcol;
  std::vector<int> ranks(static_cast<std::size_t>(positions), 0);
  MPI_Comm_rank(MPI_COMM_WORLD, &ranks[static_cast<std::size_t>(g.myrow * g.npcol + g.mycol)]);
  Cigsum2d(ctxt, "All", " ", positions, 1, ranks.data(), positions, -1, -1);
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

// This rank's blocks of one operand: where they are in the caller's array and their einrel pieces, each a
// contiguous copy (C order over the transposed block: a column-major block is the C-order block of the
// transpose).
template <class S, class Memory>
struct Operand {
  std::vector<LocalBlock> blocks;
  std::vector<std::vector<S>> copies;

  Operand(const Descriptor& d, std::int64_t i0, std::int64_t j0, std::int64_t rows, std::int64_t cols, const Grid& g)
      : blocks(local_blocks(d, i0, j0, rows, cols, g.myrow, g.mycol, g.nprow, g.npcol)) {
    for (const LocalBlock& b : blocks) copies.emplace_back(static_cast<std::size_t>(b.rows * b.cols));
  }
  // The pieces of the tensor X[cols, rows] of the submatrix starting at (i0, j0).
  std::vector<LocalPiece<S, Memory>> pieces(std::int64_t i0, std::int64_t j0) {
    std::vector<LocalPiece<S, Memory>> out;
    for (std::size_t p = 0; p < blocks.size(); ++p) {
      const LocalBlock& b = blocks[p];
      const Box box{{b.col - j0, b.row - i0}, {b.col - j0 + b.cols, b.row - i0 + b.rows}};
      out.push_back({box, typename LocalPiece<S, Memory>::view_type(copies[p].data(), copies[p].size())});
    }
    return out;
  }
  void pack(const S* local, std::int64_t lld) {
    for (std::size_t p = 0; p < blocks.size(); ++p) {
      const LocalBlock& b = blocks[p];
      for (std::int64_t c = 0; c < b.cols; ++c)
        std::memcpy(copies[p].data() + c * b.rows, local + b.local_row + (b.local_col + c) * lld,
                    static_cast<std::size_t>(b.rows) * sizeof(S));
    }
  }
  // local = alpha · copy + beta · local (beta = 0: local is not read).
  void unpack(S* local, std::int64_t lld, S alpha, S beta) const {
    for (std::size_t p = 0; p < blocks.size(); ++p) {
      const LocalBlock& b = blocks[p];
      for (std::int64_t c = 0; c < b.cols; ++c) {
        S* to = local + b.local_row + (b.local_col + c) * lld;
        const S* from = copies[p].data() + c * b.rows;
        for (std::int64_t r = 0; r < b.rows; ++r)
          to[r] = beta == S(0) ? alpha * from[r] : alpha * from[r] + beta * to[r];
      }
    }
  }
};

// One planned product C = op(A) op(B) on a grid, with its pieces.
template <class Exec, class S>
class Product {
  using Memory = typename Exec::memory_space;

 public:
  Product(const Call<S>& call, const Grid& g)
      : a_(call.da, call.ia, call.ja, call.transa == 'N' ? call.m : call.k, call.transa == 'N' ? call.k : call.m, g),
        b_(call.db, call.ib, call.jb, call.transb == 'N' ? call.k : call.n, call.transb == 'N' ? call.n : call.k, g),
        c_(call.dc, call.ic, call.jc, call.m, call.n, g),
        program_(g.comm, graph(call), options()) {
    program_.template set_input<S>("A", a_.pieces(call.ia, call.ja));
    program_.template set_input<S>("B", b_.pieces(call.ib, call.jb));
    program_.template set_output<S>("C", c_.pieces(call.ic, call.jc));
  }
  void run(const Call<S>& call) {
    a_.pack(call.a, call.da.lld);
    b_.pack(call.b, call.db.lld);
    program_.execute();
    c_.unpack(call.c, call.dc.lld, call.alpha, call.beta);
  }

 private:
  // A product called once or a few times: warming its memory before the first execution (Session::prepare)
  // costs more than it saves (the first of the matrix chain's three 4096² products on 2 ranks took 1.92 s
  // with it, 1.30 s without; later ones 0.93 s).
  static engine::Options options() {
    engine::Options o;
    o.warm_memory = false;
    return o;
  }
  // The product over the stored (column-major) submatrices as C-order tensors of their transposes: a stored
  // r x c matrix is the tensor [c, r]. With i, j, l the rows of C, its columns and the inner index, C is
  // C[j, i], A is A[l, i] (N) or A[i, l] (T), B is B[j, l] (N) or B[l, j] (T).
  static Graph graph(const Call<S>& call) {
    const Dtype dtype = dtype_of<S>();
    const bool ta = call.transa != 'N', tb = call.transb != 'N';
    Graph g;
    const VertexId a = g.input("A", dtype, ta ? Bound{call.m, call.k} : Bound{call.k, call.m});
    const VertexId b = g.input("B", dtype, tb ? Bound{call.k, call.n} : Bound{call.n, call.k});
    EinsumOptions named;
    named.name = "C";
    g.output(g.einsum(std::string(ta ? "il" : "li") + "," + (tb ? "lj" : "jl") + "->ji", a, b, named));
    return g;
  }

  Operand<S, Memory> a_, b_, c_;
  Program<Exec> program_;
};

char upper(const char* c) { return static_cast<char>(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c); }

// Why einrel does not take this call (the same on every process of the grid: only global arguments decide),
// or nothing.
template <class S>
std::optional<std::string> unsupported(const Call<S>& call) {
  if (const char* off = std::getenv("EINREL_SCALAPACK"); off && std::string(off) == "off")
    return "EINREL_SCALAPACK=off";
  for (char t : {call.transa, call.transb})
    if (t != 'N' && t != 'T' && t != 'C') return "a transpose argument other than N, T, C";
  if (call.m <= 0 || call.n <= 0 || call.k <= 0 || call.alpha == S(0)) return "an empty product";
  if (call.da.ctxt != call.dc.ctxt || call.db.ctxt != call.dc.ctxt) return "operands on different BLACS contexts";
  auto outside = [](const Descriptor& d, std::int64_t i, std::int64_t j, std::int64_t rows, std::int64_t cols) {
    return i < 0 || j < 0 || i + rows > d.m || j + cols > d.n;
  };
  const bool ta = call.transa != 'N', tb = call.transb != 'N';
  if (outside(call.da, call.ia, call.ja, ta ? call.k : call.m, ta ? call.m : call.k) ||
      outside(call.db, call.ib, call.jb, tb ? call.n : call.k, tb ? call.k : call.n) ||
      outside(call.dc, call.ic, call.jc, call.m, call.n))
    return "a submatrix outside its matrix";
  return std::nullopt;
}

template <class Exec, class S>
void run_on(const Call<S>& call, const Grid& grid, const std::vector<std::int64_t>& key) {
  std::shared_ptr<void>& product = state().products[key];
  if (!product) product = std::make_shared<Product<Exec, S>>(call, grid);
  static_cast<Product<Exec, S>*>(product.get())->run(call);
}

// The cache key: everything the plan depends on (not alpha, beta, the arrays or their leading dimensions).
template <class S>
std::vector<std::int64_t> key_of(const Call<S>& call, const Grid& grid, int space) {
  std::vector<std::int64_t> key{static_cast<std::int64_t>(sizeof(S)),
                                space,
                                grid.id,
                                call.transa,
                                call.transb,
                                call.m,
                                call.n,
                                call.k,
                                call.ia,
                                call.ja,
                                call.ib,
                                call.jb,
                                call.ic,
                                call.jc};
  for (const Descriptor* d : {&call.da, &call.db, &call.dc})
    key.insert(key.end(), {d->m, d->n, d->mb, d->nb, d->rsrc, d->csrc});
  return key;
}

// Runs the call on einrel; false when it went to ScaLAPACK instead, with the reason in `why`.
template <class S>
bool einrel_gemm(const Call<S>& call, std::string& why) {
  if (const auto no = unsupported(call)) {
    why = *no;
    return false;
  }
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  Cblacs_gridinfo(call.dc.ctxt, &nprow, &npcol, &myrow, &mycol);
  if (myrow < 0 || mycol < 0) {
    why = "a process outside the grid";
    return false;
  }
  try {
    start();
    const Grid& grid = grid_of(call.dc.ctxt);
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    // A code that asked MPI for one thread runs einrel on one thread per process too.
    if (level >= MPI_THREAD_FUNNELED) {
      run_on<Kokkos::DefaultHostExecutionSpace, S>(call, grid, key_of(call, grid, 0));
      return true;
    }
#ifdef KOKKOS_ENABLE_SERIAL
    run_on<Kokkos::Serial, S>(call, grid, key_of(call, grid, 1));
    return true;
#else
    why = "MPI_THREAD_SINGLE without Kokkos' Serial backend";
    return false;
#endif
  } catch (const std::exception& e) {  // agreed on every rank of the grid by the program's collectives
    why = e.what();
    return false;
  }
}

template <class S>
void gemm(const char* name, const char* transa, const char* transb, const int* m, const int* n, const int* k,
          const S* alpha, const S* a, const int* ia, const int* ja, const int* desca, const S* b, const int* ib,
          const int* jb, const int* descb, const S* beta, S* c, const int* ic, const int* jc, const int* descc) {
  Call<S> call{upper(transa), upper(transb), *m,      *n,      *k,      *alpha,  *beta, a,  b, c,
               *ia - 1,       *ja - 1,       *ib - 1, *jb - 1, *ic - 1, *jc - 1, {},    {}, {}};
  std::string why;
  if (read_descriptor(desca, call.da) && read_descriptor(descb, call.db) && read_descriptor(descc, call.dc)) {
    if (einrel_gemm(call, why)) return;
  } else {
    why = "a descriptor that is not of a dense matrix";
  }
  if (const char* verbose = std::getenv("EINREL_SCALAPACK_VERBOSE"); verbose && *verbose == '1')
    std::fprintf(stderr, "einrel_scalapack: %s goes to ScaLAPACK: %s\n", name, why.c_str());
  static const Gemm<S> next = reinterpret_cast<Gemm<S>>(dlsym(RTLD_NEXT, name));
  if (!next) {
    std::fprintf(stderr, "einrel_scalapack: %s needs ScaLAPACK's %s (%s), and none is linked after einrel's\n", name,
                 name, why.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  next(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
}

}  // namespace
}  // namespace einrel::scalapack

extern "C" {

void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc) {
  einrel::scalapack::gemm<double>("pdgemm_", transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta,
                                  c, ic, jc, descc);
}

void psgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
             const float* a, const int* ia, const int* ja, const int* desca, const float* b, const int* ib,
             const int* jb, const int* descb, const float* beta, float* c, const int* ic, const int* jc,
             const int* descc) {
  einrel::scalapack::gemm<float>("psgemm_", transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c,
                                 ic, jc, descc);
}

}  // extern "C"
