// einrel's pdgemm_/psgemm_ (libeinrel_scalapack, linked before ScaLAPACK) against Debian's ScaLAPACK on the same
// data: random products (transposes N, T, C; alpha and beta, beta = 0 included; submatrix offsets; block sizes
// 1..64; source processes; leading dimensions with padding) on grids 1 x R, R x 1, 2 x 2 and grids that leave
// processes out, numbered in row and column order, at the R ranks started. einrel's call is made with
// EINREL_SCALAPACK=on (einrel takes every call it can, not only those its model expects to win), the reference
// is the same call with EINREL_SCALAPACK=off, which sends it on to ScaLAPACK. Every element of C, inside the submatrix
// and outside it, must agree to rounding.
//
//   mpiexec.mpich -n 3 build/system_tests/scalapack/check_pdgemm [trials] [seed]
#include "einrel_TestPblas.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

// A global matrix dealt block-cyclically to this process of the grid (the textbook formulas, written here
// independently of the library under test).
template <class S>
struct Local {
  int desc[9];
  std::vector<S> data;
  Local(int m, int n, int mb, int nb, int rsrc, int csrc, int ctxt, int nprow, int npcol, int myrow, int mycol, int pad,
        std::mt19937& gen) {
    const int rows = numroc_(&m, &mb, &myrow, &rsrc, &nprow), cols = numroc_(&n, &nb, &mycol, &csrc, &npcol);
    const int lld = std::max(1, rows) + pad;
    desc[0] = 1, desc[1] = ctxt, desc[2] = m, desc[3] = n, desc[4] = mb, desc[5] = nb, desc[6] = rsrc, desc[7] = csrc,
    desc[8] = lld;
    data.assign(static_cast<std::size_t>(lld) * std::max(1, cols), S(0));
    std::uniform_real_distribution<double> u(-1, 1);
    for (int j = 0; j < n; ++j)  // every process draws every element, so that the matrices agree
      for (int i = 0; i < m; ++i) {
        const S x = static_cast<S>(u(gen));
        if ((i / mb + rsrc) % nprow != myrow || (j / nb + csrc) % npcol != mycol) continue;
        const int li = (i / (mb * nprow)) * mb + i % mb, lj = (j / (nb * npcol)) * nb + j % nb;
        data[static_cast<std::size_t>(li + lj * lld)] = x;
      }
  }
};

template <class S>
using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const S*, const S*, const int*,
                      const int*, const int*, const S*, const int*, const int*, const int*, const S*, S*, const int*,
                      const int*, const int*);

template <class S>
using Geadd = void (*)(const char*, const int*, const int*, const S*, const S*, const int*, const int*, const int*,
                       const S*, S*, const int*, const int*, const int*);
template <class S>
using Tran = void (*)(const int*, const int*, const S*, const S*, const int*, const int*, const int*, const S*, S*,
                      const int*, const int*, const int*);

// The largest difference between C and the expected C, relative to the largest expected element.
template <class S>
double difference(const Local<S>& c, const Local<S>& expected) {
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < c.data.size(); ++i) {
    worst = std::max(worst, std::abs(double(c.data[i]) - double(expected.data[i])));
    largest = std::max(largest, std::abs(double(expected.data[i])));
  }
  return largest > 0 ? worst / largest : worst;
}

// Calls `call(C)` once sent to ScaLAPACK (the expected C) and once to einrel; their difference.
template <class S, class Call>
double compare(Local<S>& c, const Call& call) {
  Local<S> expected = c;
  setenv("EINREL_SCALAPACK", "off", 1);
  call(expected);
  setenv("EINREL_SCALAPACK", "on", 1);
  call(c);
  return difference(c, expected);
}

// One random pdgeadd_ (or pdtran_ when `tran`) on the grid `ctxt`, on this process.
template <class S>
double add_trial(Geadd<S> geadd, Tran<S> tran, std::mt19937& gen, int ctxt, int nprow, int npcol, int myrow,
                 int mycol) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  const char ops[] = {'N', 'T', 'C'};
  const bool transposing = tran != nullptr;
  const char t = transposing ? 'T' : ops[pick(0, 2)];
  const int m = pick(1, 40), n = pick(1, 40), ia = pick(1, 4), ja = pick(1, 4), ic = pick(1, 4), jc = pick(1, 4);
  const int am = ia - 1 + (t == 'N' ? m : n) + pick(0, 5), an = ja - 1 + (t == 'N' ? n : m) + pick(0, 5);
  const int cm = ic - 1 + m + pick(0, 5), cn = jc - 1 + n + pick(0, 5), pad = pick(0, 3);
  const S alpha = static_cast<S>(std::uniform_real_distribution<double>(-2, 2)(gen));
  const S beta = static_cast<S>(pick(0, 3) == 0 ? 0.0 : std::uniform_real_distribution<double>(-2, 2)(gen));
  const Local<S> a(am, an, pick(1, 64), pick(1, 64), pick(0, nprow - 1), pick(0, npcol - 1), ctxt, nprow, npcol, myrow,
                   mycol, pad, gen);
  Local<S> c(cm, cn, pick(1, 64), pick(1, 64), pick(0, nprow - 1), pick(0, npcol - 1), ctxt, nprow, npcol, myrow, mycol,
             pad, gen);
  return compare(c, [&](Local<S>& to) {
    if (transposing)
      tran(&m, &n, &alpha, a.data.data(), &ia, &ja, a.desc, &beta, to.data.data(), &ic, &jc, to.desc);
    else
      geadd(&t, &m, &n, &alpha, a.data.data(), &ia, &ja, a.desc, &beta, to.data.data(), &ic, &jc, to.desc);
  });
}

// One random product on the grid `ctxt`; the largest difference between einrel's C and ScaLAPACK's, relative to
// the largest element of ScaLAPACK's, on this process.
template <class S>
double trial(Gemm<S> gemm, std::mt19937& gen, int ctxt, int nprow, int npcol, int myrow, int mycol) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  const char ops[] = {'N', 'T', 'C'};
  const char ta = ops[pick(0, 2)], tb = ops[pick(0, 2)];
  const int m = pick(1, 40), n = pick(1, 40), k = pick(1, 40);
  auto block = [&] { return pick(0, 3) == 0 ? pick(1, 3) : pick(1, 64); };
  const int ia = pick(1, 4), ja = pick(1, 4), ib = pick(1, 4), jb = pick(1, 4), ic = pick(1, 4), jc = pick(1, 4);
  const int am = ia - 1 + (ta == 'N' ? m : k) + pick(0, 5), an = ja - 1 + (ta == 'N' ? k : m) + pick(0, 5);
  const int bm = ib - 1 + (tb == 'N' ? k : n) + pick(0, 5), bn = jb - 1 + (tb == 'N' ? n : k) + pick(0, 5);
  const int cm = ic - 1 + m + pick(0, 5), cn = jc - 1 + n + pick(0, 5);
  const int amb = block(), anb = block(), bmb = block(), bnb = block(), cmb = block(), cnb = block();
  const S alpha = static_cast<S>(pick(0, 4) == 0 ? 1.0 : std::uniform_real_distribution<double>(-2, 2)(gen));
  const S beta = static_cast<S>(pick(0, 3) == 0 ? 0.0 : std::uniform_real_distribution<double>(-2, 2)(gen));
  const int ars = pick(0, nprow - 1), acs = pick(0, npcol - 1), brs = pick(0, nprow - 1), bcs = pick(0, npcol - 1),
            crs = pick(0, nprow - 1), ccs = pick(0, npcol - 1), pad = pick(0, 3);
  const Local<S> a(am, an, amb, anb, ars, acs, ctxt, nprow, npcol, myrow, mycol, pad, gen);
  const Local<S> b(bm, bn, bmb, bnb, brs, bcs, ctxt, nprow, npcol, myrow, mycol, pad, gen);
  Local<S> c(cm, cn, cmb, cnb, crs, ccs, ctxt, nprow, npcol, myrow, mycol, pad, gen);
  return compare(c, [&](Local<S>& to) {
    gemm(&ta, &tb, &m, &n, &k, &alpha, a.data.data(), &ia, &ja, a.desc, b.data.data(), &ib, &jb, b.desc, &beta,
         to.data.data(), &ic, &jc, to.desc);
  });
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // as a ScaLAPACK code would: MPI_THREAD_SINGLE
  setenv("EINREL_SCALAPACK", "on", 1);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int trials = argc > 1 ? std::atoi(argv[1]) : 40;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 5u;
  std::vector<std::pair<int, int>> grids{{1, size}, {size, 1}};
  if (size == 4) grids.push_back({2, 2});
  if (size >= 3) grids.push_back({1, size - 1});  // a grid that leaves the last process out
  if (size == 5) grids.push_back({2, 2});
  double worst[2] = {0, 0};
  int done = 0;
  for (int t = 0; t < trials; ++t) {
    const auto [nprow, npcol] = grids[static_cast<std::size_t>(t) % grids.size()];
    int ctxt = -1, pr = 0, pc = 0, myrow = -1, mycol = -1;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, t % 3 == 1 ? "Col" : "Row", nprow, npcol);  // column-major grids number processes apart
    std::mt19937 gen(seed * 1000u + static_cast<unsigned>(t));         // the same draws on every process
    if (ctxt >= 0) {
      Cblacs_gridinfo(ctxt, &pr, &pc, &myrow, &mycol);
      const bool single = t % 4 == 3;
      const int kind = (t / 4) % 4;  // products twice as often as transposes and additions
      double err = 0;
      if (kind < 2)
        err = single ? trial<float>(psgemm_, gen, ctxt, pr, pc, myrow, mycol)
                     : trial<double>(pdgemm_, gen, ctxt, pr, pc, myrow, mycol);
      else if (kind == 2)
        err = single ? add_trial<float>(psgeadd_, nullptr, gen, ctxt, pr, pc, myrow, mycol)
                     : add_trial<double>(pdgeadd_, nullptr, gen, ctxt, pr, pc, myrow, mycol);
      else
        err = single ? add_trial<float>(nullptr, pstran_, gen, ctxt, pr, pc, myrow, mycol)
                     : add_trial<double>(nullptr, pdtran_, gen, ctxt, pr, pc, myrow, mycol);
      worst[single] = std::max(worst[single], err);
      Cblacs_gridexit(ctxt);
    }
    ++done;
  }
  double all[2];
  MPI_Allreduce(worst, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const bool ok = all[0] <= 1e-12 && all[1] <= 1e-5;
  if (rank == 0)
    std::printf(
        "PBLAS against ScaLAPACK: %d random calls on %d ranks, max relative difference %.2e "
        "(f64), %.2e (f32): %s\n",
        done, size, all[0], all[1], ok ? "ok" : "WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
