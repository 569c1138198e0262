// PBLAS' pdgemm_/psgemm_, pdtran_/pstran_ and pdgeadd_/psgeadd_ in front of ScaLAPACK's (docs/c-fortran.md
// "Through ScaLAPACK"): each call goes to einrel where EINREL_SCALAPACK and the model of einrel_CallModel.hpp
// give it einrel (computed by libeinrel_scalapack_engine.so, loaded on first use), else to the routine this
// library stands in front of (ScaLAPACK's, found with dlsym(RTLD_NEXT)), so linking it never breaks a code.
// This library itself loads neither Kokkos nor a BLAS: a program whose calls all stay on ScaLAPACK pays
// next to nothing for it.
#include <einrel_BlacsApi.hpp>
#include <einrel_PblasCall.hpp>

#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace einrel::scalapack {
namespace {

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
// The call as the model sees it, from global arguments only.
template <class S>
CallShape shape_of(const Operation<S>& op, int nprow, int npcol) {
  CallShape call{op.m, op.n, op.k, op.panel, static_cast<std::int64_t>(sizeof(S)), nprow, npcol, op.beta == S(0), 0};
  std::vector<const Submatrix*> all{&op.output};
  for (const Submatrix& m : op.inputs) all.push_back(&m);
  for (const Submatrix* m : all) call.pieces += blocks_on_grid(m->d, m->i0, m->j0, m->rows, m->cols, nprow, npcol);
  return call;
}
// The engine library (libeinrel_scalapack_engine.so, next to this one), loaded on first use, or why not.
struct Engine {
  decltype(&einrel_scalapack_engine_f64) f64 = nullptr;
  decltype(&einrel_scalapack_engine_f32) f32 = nullptr;
  std::string error;
};

const Engine& engine() {
  static const Engine loaded = [] {
    Engine e;
    Dl_info self;
    if (!dladdr(reinterpret_cast<void*>(&engine), &self) || !self.dli_fname) {
      e.error = "cannot find where libeinrel_scalapack.so is";
      return e;
    }
    std::string path = self.dli_fname;
    path = path.substr(0, path.find_last_of('/') + 1) + "libeinrel_scalapack_engine.so";
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      e.error = std::string("cannot load ") + path + ": " + dlerror();
      return e;
    }
    e.f64 = reinterpret_cast<decltype(e.f64)>(dlsym(library, "einrel_scalapack_engine_f64"));
    e.f32 = reinterpret_cast<decltype(e.f32)>(dlsym(library, "einrel_scalapack_engine_f32"));
    if (!e.f64 || !e.f32) e.error = path + " lacks einrel_scalapack_engine_f64/_f32";
    return e;
  }();
  return loaded;
}

// Runs the operation on einrel where it takes it (true, with how it went in `why`), or says in `why` why
// it goes to ScaLAPACK instead (false); the model's figures only where `explain`.
template <class S>
bool run_on_einrel(const Operation<S>& op, bool explain, std::string& why) {
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
      why = explain ? "predicted " + seconds_text(costs.common + costs.scalapack) + " on ScaLAPACK, " +
                          seconds_text(costs.common + costs.einrel_planned) + " on einrel"
                    : "predicted faster on ScaLAPACK";
      return false;
    }
    const Engine& e = engine();
    if (!e.error.empty()) {
      why = e.error;
      return false;
    }
    bool taken = false;
    if constexpr (std::is_same_v<S, double>)
      taken = e.f64(&op, mode == Mode::on, &costs, &why);
    else
      taken = e.f32(&op, mode == Mode::on, &costs, &why);
    if (explain)  // what the model expected, beside what happened
      why = "predicted " + seconds_text(costs.common + costs.einrel_planned) + " (planned) on einrel, " +
            seconds_text(costs.common + costs.scalapack) + " on ScaLAPACK; " + why;
    return taken;
  } catch (const std::exception& e) {  // an environment variable or machine file, the same on every process
    why = e.what();
    return false;
  }
}

// The routine of ScaLAPACK (or whatever follows this library) named `name` (one of the entry points' names,
// looked up once each).
void* next_routine(const char* name) {
  static std::map<const char*, void*> found;
  const auto known = found.find(name);
  if (known != found.end()) return known->second;
  return found[name] = dlsym(RTLD_NEXT, name);
}

// Runs `op` on einrel, or else calls `name` after this library with `args`.
template <class S, class... Args>
void einrel_or_next(const char* name, const std::optional<Operation<S>>& op, std::string why, Args... args) {
  const char* verbose = std::getenv("EINREL_SCALAPACK_VERBOSE");
  // One line per call, from the grid's first process (every process of the grid decides the same); the
  // messages are made only then (a factorization makes thousands of calls that take microseconds).
  bool say = verbose && *verbose == '1';
  std::string call = name;
  if (op && say) {
    int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
    Cblacs_gridinfo(op->output.d.ctxt, &nprow, &npcol, &myrow, &mycol);
    say = myrow == 0 && mycol == 0;
    call += " " + describe(CallShape{op->m, op->n, op->k}) + " (" + (std::is_same_v<S, double> ? "f64" : "f32") + ", " +
            std::to_string(nprow) + "x" + std::to_string(npcol) + " grid)";
  }
  const double start = say ? MPI_Wtime() : 0;
  if (op && run_on_einrel(*op, say, why)) {
    if (say)
      std::fprintf(stderr, "einrel_scalapack: %s on einrel: %s: %s\n", call.c_str(),
                   seconds_text(MPI_Wtime() - start).c_str(), why.c_str());
    return;
  }
  void* next = next_routine(name);
  if (!next) {
    std::fprintf(stderr, "einrel_scalapack: %s needs ScaLAPACK's %s (%s), and none is linked after einrel's\n", name,
                 name, why.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const double routed = say ? MPI_Wtime() : 0;
  reinterpret_cast<void (*)(Args...)>(next)(args...);
  if (say)
    std::fprintf(stderr, "einrel_scalapack: %s on ScaLAPACK: %s (decided in %s): %s\n", call.c_str(),
                 seconds_text(MPI_Wtime() - routed).c_str(), seconds_text(routed - start).c_str(), why.c_str());
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
  static const char* const equations[2][2] = {{"li,jl->ji", "li,lj->ji"}, {"il,jl->ji", "il,lj->ji"}};
  return Operation<S>{equations[ta == 'N' ? 0 : 1][tb == 'N' ? 0 : 1],
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
