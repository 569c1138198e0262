#ifndef EINREL_CONTRACTIONPLAN_HPP
#define EINREL_CONTRACTIONPLAN_HPP

#include <einrel_Bound.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <string>

namespace einrel::kernels {

// How a binary contraction (join mul, agg sum, no map) becomes batched GEMM. Labels fall into groups:
// batch (in X, Y and Z), m (X and Z), n (Y and Z), k (X and Y, summed) and labels summed in one operand
// only (x_only, y_only), which are reduced away before the GEMM. For every batch index b,
//   Z_b[m, n] = Σ_k X_b[m, k] · Y_b[k, n]
// with matrices in row-major (C) order. Each operand is used in place when its labels already read as
// batch + one matrix group + the other, in the group orders chosen here (a transpose flag absorbs the
// order of the two matrix groups, and Z in n-before-m order is computed as Z^T = Y^T X^T); otherwise it
// is packed (permuted) into one of those forms, the one that keeps its last stored label last. The
// group orders are chosen to pack as few elements as possible. With strided batches (a vendor GEMM that
// takes a leading dimension and a batch stride for each operand, cuBLAS's strided-batched calls), an
// operand stored with its batch group between its two non-empty matrix groups ([m][batch][k], say) is
// read in place too.
struct ContractionPlan {
  std::string batch, m, n, k, x_only, y_only;
  Extent batch_size = 1, m_size = 1, n_size = 1, k_size = 1;
  // Labels of X and Y after the single-operand reductions, as stored.
  std::string x_labels, y_labels;
  // The order the GEMM reads each operand in (Z: writes); it differs from the stored order only when
  // packing.
  std::string x_gemm, y_gemm, z_gemm;
  bool pack_x = false, pack_y = false, pack_z = false;
  bool trans_x = false;       // X_b stored as [k][m]
  bool trans_y = false;       // Y_b stored as [n][k]
  bool z_transposed = false;  // Z_b stored as [n][m]: computed as Y^T X^T
  // Per operand as the GEMM reads it: elements between consecutive rows of a matrix (its leading dimension
  // in row-major terms) and between consecutive matrices of the batch.
  Extent x_ld = 1, y_ld = 1, z_ld = 1, x_batch_stride = 1, y_batch_stride = 1, z_batch_stride = 1;

  // Elements copied by packing (a measure of overhead).
  Extent packed_elements(const Bound& x, const Bound& y, const Bound& z) const;
};

// Where a batch of row-major matrices of a GEMM lie, per operand (A, B, C): elements between consecutive
// rows (the leading dimension) and between consecutive matrices.
struct GemmStrides {
  Extent lda = 1, ldb = 1, ldc = 1, batch_a = 1, batch_b = 1, batch_c = 1;
  bool operator==(const GemmStrides& o) const {
    return lda == o.lda && ldb == o.ldb && ldc == o.ldc && batch_a == o.batch_a && batch_b == o.batch_b &&
           batch_c == o.batch_c;
  }
};
// The strides of matrices stored one after the other without gaps: op(A) rows x inner, op(B) inner x cols.
GemmStrides packed_strides(bool trans_a, bool trans_b, Extent rows, Extent cols, Extent inner);

// Plans `e`, resolved against the bounds of its operands. The grouping holds for any binary EinSum (the
// blocked generic kernel uses it too, without strided batches); the single-operand reductions and the GEMM
// apply to contractions. Throws Error unless `e` is binary.
ContractionPlan plan_contraction(const ResolvedEinSum& e, bool strided_batches = false);

}  // namespace einrel::kernels

#endif
