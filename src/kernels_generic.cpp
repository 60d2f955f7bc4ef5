// The baseline build of the vector kernels: R's own compiler flags.
#define LSNN_KERNEL_NAMESPACE generic
#include <lsnn/embed/cost_kernels_impl.h>
#include <lsnn/knn/distance_kernels_impl.h>
#include <lsnn/pca/pca_kernels_impl.h>

#include "kernel_choice.h"

namespace lsnn_r {
const lsnn::DistanceKernels& generic_distance_kernels() {
  return lsnn::generic::distance_kernels();
}
const lsnn::CostKernels& generic_cost_kernels() { return lsnn::generic::cost_kernels(); }
const lsnn::PcaKernels& generic_pca_kernels() { return lsnn::generic::pca_kernels(); }
}  // namespace lsnn_r
