#' Which vector kernels lsnn runs on this machine
#'
#' lsnn carries two builds of its distance kernels: the portable baseline R
#' compiles packages with, and one for AVX2 with fused multiply-add (and
#' POPCNT, for the Hamming distance), chosen at run time when the CPU has
#' those units. Setting `options(lsnn.simd = "generic")` forces the
#' baseline.
#'
#' On one machine with one kernel build, results are identical for any
#' `n_threads`. Across builds they can differ: fused multiply-add rounds
#' differently, so distances (and what is computed from them) can differ in
#' their last bits, and neighbours at nearly equal distances can swap.
#' Hamming distances are exact counts in both builds, which give the same
#' results.
#' `options(lsnn.simd = "generic")` makes every machine run the baseline
#' build, so that machines with and without AVX2 give the same results; a
#' sharded search ([extended_knn_sharded()]) passes the option to its
#' workers, so set it when they are not all alike.
#'
#' @return A string: `"avx2+fma"` or `"generic"`.
#' @examples
#' simd_kernels()
#' @export
simd_kernels <- function() {
  .simd_kernels(simd_option())
}

simd_option <- function() {
  simd <- getOption("lsnn.simd", "auto")
  if (!is.character(simd) || length(simd) != 1 || !simd %in% c("auto", "generic")) {
    stop("option 'lsnn.simd' must be \"auto\" or \"generic\"", call. = FALSE)
  }
  simd
}
