#ifndef EINREL_PBLASCALL_HPP
#define EINREL_PBLASCALL_HPP

// One PBLAS call as libeinrel_scalapack.so (which decides) hands it to libeinrel_scalapack_engine.so (which
// computes it with einrel): both are built together, so C++ types cross between them.

#include <einrel_BlockCyclic.hpp>
#include <einrel_CallModel.hpp>

#include <string>
#include <vector>

namespace einrel::scalapack {

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
  const char* equation = "";
  std::vector<Submatrix> inputs;
  std::vector<const S*> input_data;
  Submatrix output;
  S* output_data = nullptr;
  S alpha = 1, beta = 0;
  std::int64_t m = 0, n = 0, k = 0, panel = 1;
};

}  // namespace einrel::scalapack

// The engine library's entry points (found with dlsym): compute `op` on einrel and return true, with how it
// went in `why`; or return false with the reason in `why`, the call then going to ScaLAPACK. `on`: take it
// whatever planning costs (EINREL_SCALAPACK=on); otherwise plan a new product only where plan_pays(costs).
// Collective over the processes of the call's grid; throws nothing.
extern "C" {
bool einrel_scalapack_engine_f64(const einrel::scalapack::Operation<double>* op, bool on,
                                 const einrel::scalapack::CallCosts* costs, std::string* why);
bool einrel_scalapack_engine_f32(const einrel::scalapack::Operation<float>* op, bool on,
                                 const einrel::scalapack::CallCosts* costs, std::string* why);
}

#endif
