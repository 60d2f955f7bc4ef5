#' Which vector kernels lsnn runs on this machine
#'
#' lsnn carries two builds of its distance kernels: the portable baseline R
#' compiles packages with, and one for AVX2 with fused multiply-add, chosen
#' at run time when the CPU has those units. Setting
#' `options(lsnn.simd = "generic")` forces the baseline (to compare them, or
#' to rule the fast build out when chasing a problem); results are the same
#' either way, as every reported distance is recomputed in double precision.
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
