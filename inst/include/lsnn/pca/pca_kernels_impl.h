// Bodies of the PcaKernels (pca_kernels.h). Not a normal header: included
// once per instruction set inside LSNN_KERNEL_NAMESPACE, exactly as
// kernels_impl.h (whose comment explains why).
#ifndef LSNN_KERNEL_NAMESPACE
#error "define LSNN_KERNEL_NAMESPACE before including lsnn/pca_kernels_impl.h"
#endif

#include <Eigen/Core>

#include <cstddef>

#include "pca_kernels.h"

namespace lsnn {
namespace LSNN_KERNEL_NAMESPACE {

// Eigen's cache-blocked product; the w x w diagonal block is computed whole
// (its upper part is ignored), a small price for one product call.
inline void pca_cross_panel(const double* A, std::size_t m, std::size_t d, std::size_t c0,
                            std::size_t w, double* C) {
  typedef Eigen::Index Index;
  Eigen::Map<const Eigen::MatrixXd> a(A, static_cast<Index>(m), static_cast<Index>(d));
  Eigen::Map<Eigen::MatrixXd> c(C, static_cast<Index>(d), static_cast<Index>(d));
  const Index j0 = static_cast<Index>(c0), nw = static_cast<Index>(w),
              rest = static_cast<Index>(d) - j0;
  c.block(j0, j0, rest, nw).noalias() += a.rightCols(rest).transpose() * a.middleCols(j0, nw);
}

inline void pca_product(const double* A, std::size_t m, std::size_t d, const double* R,
                        std::size_t k, double* out, std::size_t ld_out) {
  typedef Eigen::Index Index;
  Eigen::Map<const Eigen::MatrixXd> a(A, static_cast<Index>(m), static_cast<Index>(d));
  Eigen::Map<const Eigen::MatrixXd> r(R, static_cast<Index>(d), static_cast<Index>(k));
  Eigen::Map<Eigen::MatrixXd, 0, Eigen::OuterStride<>> o(
      out, static_cast<Index>(m), static_cast<Index>(k),
      Eigen::OuterStride<>(static_cast<Index>(ld_out)));
  o.noalias() = a * r;
}

inline const PcaKernels& pca_kernels() {
  static const PcaKernels table = {
      &pca_cross_panel, &pca_product,
#if defined(LSNN_KERNEL_AVX2)
      "avx2+fma"
#else
      "generic"
#endif
  };
  return table;
}

}  // namespace LSNN_KERNEL_NAMESPACE
}  // namespace lsnn
