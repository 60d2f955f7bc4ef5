// The double-precision matrix products of the exact PCA (pca.h), behind a
// table of function pointers like the distance kernels (kernels.h): one
// build with R's compiler flags and one for AVX2 + FMA, chosen at run time.
// Their bodies are in pca_kernels_impl.h.
#ifndef LSNN_PCA_KERNELS_H
#define LSNN_PCA_KERNELS_H

#include <cstddef>

namespace lsnn {

struct PcaKernels {
  // C[c0:d, c0:c0+w] += A[, c0:d]' A[, c0:c0+w] for the column-major m x d
  // block A and the column-major d x d matrix C: one column panel of the
  // lower triangle of A'A.
  void (*cross_panel)(const double* A, std::size_t m, std::size_t d, std::size_t c0,
                      std::size_t w, double* C);
  // out = A R for the column-major m x d block A and d x k matrix R; out is
  // m x k, column-major with a column stride of ld_out.
  void (*product)(const double* A, std::size_t m, std::size_t d, const double* R, std::size_t k,
                  double* out, std::size_t ld_out);
  const char* name;
};

}  // namespace lsnn

#endif  // LSNN_PCA_KERNELS_H
