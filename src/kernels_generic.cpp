// The baseline build of the distance kernels: R's own compiler flags.
#pragma GCC diagnostic ignored "-Wignored-attributes"
#define LSNN_KERNEL_NAMESPACE generic
#include <lsnn/kernels_impl.h>

#include "kernels.h"

namespace lsnn_r {
const lsnn::DistanceKernels& generic_distance_kernels() {
  return lsnn::generic::distance_kernels();
}
}  // namespace lsnn_r
