# The number of threads a call runs on. Every lsnn result is the same for
# any number of threads, so the default is simply the most the machine
# offers R.

#' How many threads lsnn uses by default
#'
#' Every function of lsnn with an `n_threads` argument runs on
#' `default_n_threads()` threads when `n_threads` is `NULL` (its default):
#' the option `lsnn.n_threads` when it is set, else the number of threads
#' RcppParallel would run (`RcppParallel::defaultNumThreads()`: all cores,
#' or `RCPP_PARALLEL_NUM_THREADS` when that environment variable is set), at
#' most 2 when `_R_CHECK_LIMIT_CORES_` is set (as under `R CMD check`).
#' Results never depend on the number of threads, only the time does.
#'
#' @return A whole number, at least 1.
#' @examples
#' default_n_threads()
#' old <- options(lsnn.n_threads = 1)
#' default_n_threads()
#' options(old)
#' @export
default_n_threads <- function() {
  opt <- getOption("lsnn.n_threads")
  if (!is.null(opt)) {
    if (!is_scalar_number(opt, min = 1, max = big_int, whole = TRUE)) {
      stop("option 'lsnn.n_threads' must be NULL or a whole number of at least 1 (it is ",
           show_value(opt), ")", call. = FALSE)
    }
    return(as.integer(opt))
  }
  n <- tryCatch(RcppParallel::defaultNumThreads(), error = function(e) 1L)
  if (!is.numeric(n) || length(n) != 1 || is.na(n) || n < 1) n <- 1L
  limit <- Sys.getenv("_R_CHECK_LIMIT_CORES_", "")
  if (nzchar(limit) && !identical(toupper(limit), "FALSE")) n <- min(n, 2L)
  as.integer(n)
}
