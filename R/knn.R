#' Extended k-nearest neighbour graph
#'
#' Finds, for every row of `X`, the row itself and its
#' `min(n_neighbors + n_extra, n - 1)` nearest other rows: the "extended"
#' neighbourhood from which [enn_to_lsnn()] picks locally scaled neighbours.
#'
#' With `nn_kind = "exact"` every pair of rows is compared. The candidate
#' search runs on single-precision matrix products (AVX2 and FMA where the
#' CPU has them, see [simd_kernels()]), but the result is exact: the kept
#' distances are recomputed in double precision from `X` as given, and each
#' row is checked against a bound on the single-precision rounding error;
#' a row the check cannot certify is scored again against every other row,
#' and all the rows within the error bound are compared in double precision. Memory stays proportional to `n * k` plus a copy of
#' the data (in single precision when `X` holds values that single precision
#' represents exactly, such as pixel intensities or counts); no `n x n` matrix
#' is ever formed. Time grows as `n^2`.
#'
#' With `nn_kind = "approx"`, lsnn's own nearest-neighbour descent is used.
#'
#' Ties between equally distant rows are broken by the smaller row number, and
#' the row itself is in column 1 even when it has exact duplicates. Results
#' are identical for every `n_threads`.
#'
#' @param X The data: a numeric matrix, a data frame (its numeric columns are
#'   used; a message names any other columns dropped) or a sparse
#'   `Matrix::dgCMatrix` (metrics "euclidean" and "cosine"), one row per
#'   observation. No missing or infinite values.
#' @param n_neighbors,n_extra Together the number of neighbours wanted besides
#'   the row itself, `n_neighbors + n_extra`, capped at `n - 1`.
#' @param n_threads Number of threads (0 and 1 both run on the calling thread).
#' @param nn_kind `"exact"` or `"approx"`.
#' @param verbose If `TRUE`, report progress with [message()].
#' @param metric `"euclidean"` (default), `"cosine"` (1 minus the cosine
#'   similarity; a zero row is at distance 1 from non-zero rows and 0 from
#'   other zero rows), `"correlation"` (1 minus Pearson's correlation of the
#'   two rows) or `"manhattan"`.
#' @return A graph: `list(idx, dist)`, two `n x k` matrices with
#'   `k = min(n_neighbors + n_extra, n - 1) + 1`. `idx` is an integer matrix
#'   of 1-based row numbers with the row itself in column 1; `dist` holds the
#'   distances, 0 in column 1 and increasing along each row. This is the
#'   format `uwot::umap(nn_method = )` takes.
#' @seealso [locally_scaled_knn()], [enn_to_lsnn()], [truncate_graph()].
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' enn <- extended_knn(X, n_neighbors = 15, n_extra = 10, nn_kind = "exact")
#' dim(enn$idx)
#' enn$idx[1:3, 1:5]
#' @export
extended_knn <- function(X, n_neighbors = 150, n_extra = 50, n_threads = 1,
                         nn_kind = "approx", verbose = FALSE, metric = "euclidean") {
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1)
  n_extra <- check_whole(n_extra, "n_extra", min = 0)
  n_threads <- check_n_threads(n_threads)
  nn_kind <- check_choice(nn_kind, "nn_kind", c("exact", "approx"))
  verbose <- check_flag(verbose, "verbose")
  metric <- check_choice(metric, "metric", c("euclidean", "cosine", "correlation", "manhattan"))
  data <- prepare_data(X, metric)
  k <- min(n_neighbors + n_extra, data$n - 1) + 1
  if (nn_kind == "exact") {
    exact_knn(data, k, metric, n_threads, verbose)
  } else {
    approx_knn(data, k, metric, n_threads, verbose)
  }
}

# The exact search on prepared data (see prepare_data()).
exact_knn <- function(data, k, metric, n_threads, verbose, block_rows = 0L) {
  graph <- if (data$kind == "dense") {
    .exact_knn_dense(data$x, k, metric, n_threads, verbose, simd_option(), block_rows)
  } else {
    .exact_knn_sparse(data$rows@p, data$rows@i, data$rows@x, data$n, data$d, k, metric,
                      n_threads, verbose, simd_option(), block_rows)
  }
  attr(graph, "lsnn_refined_rows") <- NULL
  graph
}

approx_knn <- function(data, k, metric, n_threads, verbose) {
  stop_arg("nn_kind = \"approx\" is not available yet in this development version; ",
           "use nn_kind = \"exact\"")
}
