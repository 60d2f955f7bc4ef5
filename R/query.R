# The index of reference data and the queries of new rows against it.

# The version of the index's layout; readers refuse any other.
index_format_version <- 1L

# The index of prepared data (see prepare_data()) and its extended graph
# (the row itself in column 1).
new_index <- function(data, metric, graph, scale_from, scale_to, n_threads) {
  stored <- if (data$kind == "dense") data$x else data$rows
  dimnames(stored) <- NULL
  # (a graph too narrow for the local scales serves the kNN queries alone)
  sigma <- if (scale_to <= ncol(graph$idx)) {
    .local_scales(graph$idx, graph$dist, scale_from, scale_to, n_threads)
  }
  structure(list(
    format_version = index_format_version,
    data = stored,
    metric = metric,
    graph = list(idx = graph$idx, dist = graph$dist),
    sigma = sigma,
    scale_from = as.integer(scale_from),
    scale_to = as.integer(scale_to),
    search = list(degree = 16L, n_entry = 0L)
  ), class = "lsnn_index")
}

#' @method print lsnn_index
#' @export
print.lsnn_index <- function(x, ...) {
  kind <- if (inherits(x$data, "sparseMatrix")) "sparse" else "dense"
  cat(sprintf("lsnn index: %s reference rows x %d columns (%s, %s), graph of %d columns, local scales from columns %d to %d\n",
              format(nrow(x$data), big.mark = ","), ncol(x$data), kind, x$metric,
              ncol(x$graph$idx), x$scale_from, x$scale_to))
  invisible(x)
}

check_index <- function(index) {
  if (!inherits(index, "lsnn_index")) {
    stop_arg("'index' must be an lsnn index, from extended_knn(ret_index = TRUE) or ",
             "locally_scaled_knn(ret_index = TRUE)")
  }
  version <- index$format_version
  if (!is.numeric(version) || length(version) != 1 || is.na(version) ||
      version != index_format_version) {
    stop_arg("'index' has format version ", if (is.null(version)) "none" else show_value(version),
             "; this version of lsnn reads version ", index_format_version,
             ": build it again with extended_knn(ret_index = TRUE)")
  }
  index
}

# The query rows in the index's form: list(kind, x) for dense data, or the
# rows stacked under the reference rows for sparse data.
prepare_query <- function(index, query) {
  if (is.numeric(query) && is.null(dim(query))) query <- matrix(query, nrow = 1)
  sparse_index <- inherits(index$data, "sparseMatrix")
  if (!sparse_index && inherits(query, "Matrix")) query <- as.matrix(query)
  data <- prepare_data(query, index$metric, "query", min_rows = 1)
  if (data$d != ncol(index$data)) {
    stop_arg("'query' has ", data$d, " columns; the index's reference data has ", ncol(index$data))
  }
  if (sparse_index && data$kind == "dense") {
    data <- list(kind = "sparse",
                 rows = methods::as(methods::as(data$x, "CsparseMatrix"), "RsparseMatrix"),
                 n = data$n, d = data$d)
  }
  data
}

# Whether the approximate query hands over to the exact one: few reference
# rows, or many of them wanted (the graph search then scores most rows).
query_runs_exact <- function(n_ref, k) n_ref <= 512 || 4 * k >= n_ref

query_knn <- function(index, data, k, nn_kind, epsilon, n_threads, verbose) {
  seed <- if (nn_kind == "approx") draw_seed() else c(0L, 0L)
  exact <- nn_kind == "exact" || query_runs_exact(nrow(index$data), k)
  search <- c(index$graph, index$search, list(epsilon = epsilon))
  if (data$kind == "dense") {
    ref <- index$data
    if (!is.double(ref)) storage.mode(ref) <- "double"
    .knn_query_dense(ref, data$x, k, index$metric, exact, search, seed, n_threads, verbose,
                     simd_option())
  } else {
    # the reference rows, then the query rows, as CSR
    stacked <- methods::as(rbind(index$data, data$rows), "RsparseMatrix")
    .knn_query_sparse(stacked@p, stacked@j, stacked@x, nrow(stacked), ncol(stacked),
                      nrow(index$data), k, index$metric, exact, search, seed, n_threads, verbose,
                      simd_option())
  }
}

#' Nearest reference rows of new data
#'
#' Finds, for every row of `query`, its `n_neighbors` nearest rows of the
#' reference data held in an index from [extended_knn()] or
#' [locally_scaled_knn()] with `ret_index = TRUE`.
#'
#' **Counting neighbours.** A query row is not one of the reference rows, so
#' the result has no self column: `n_neighbors` columns, all reference rows.
#' (A query row equal to a reference row finds it first, at distance 0.)
#'
#' With `nn_kind = "exact"` every query row is compared with every reference
#' row by the single-precision matrix products of the exact [extended_knn()]
#' search, and the result is proven exact in double precision: the nearest
#' reference rows by distance, ties by the smaller row number, as brute force
#' gives them. Querying the reference rows themselves gives the reference's
#' own exact graph without column 1 (when no two rows are equal).
#'
#' With `nn_kind = "approx"` (the default) each query walks the index's
#' neighbour graph (each reference row's 16 nearest neighbours and up to 16
#' rows that list it), starting from a random sample of reference rows: a
#' best-first search that keeps the `n_neighbors` nearest rows found and
#' stops when the nearest row not yet expanded is farther than the farthest
#' of those by more than the relative slack `epsilon` (in squared distance
#' for the euclidean metric). Larger
#' `epsilon` finds more of the true neighbours, at more time. Distances are
#' recomputed in double precision, as the exact search gives them. The
#' sample is drawn from R's generator, so [set.seed()] reproduces the
#' result, which is the same for every `n_threads`. With at most 512
#' reference rows, or `n_neighbors` above a quarter of them, the exact search
#' runs instead.
#'
#' @param index An index, from [extended_knn()] or [locally_scaled_knn()]
#'   with `ret_index = TRUE` (see there for what it holds).
#' @param query The new data: a numeric matrix, a data frame (its numeric
#'   columns) or a sparse matrix of the Matrix package, with the reference data's columns;
#'   a numeric vector is one row. No missing or infinite values.
#' @param n_neighbors Number of reference rows to find for each query row,
#'   at most the number of reference rows.
#' @param nn_kind `"exact"` or `"approx"`.
#' @param n_threads Number of threads (0 and 1 both run on the calling thread).
#' @param verbose If `TRUE`, show progress and a summary line.
#' @param epsilon The approximate search's slack (at least 0).
#' @return A graph `list(idx, dist)` of two `nrow(query) x n_neighbors`
#'   matrices: `idx` the 1-based reference row numbers, `dist` the
#'   distances, increasing along each row.
#' @seealso [locally_scaled_knn_query()]
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' train <- seq(1, 150, by = 2)
#' res <- extended_knn(X[train, ], n_neighbors = 10, n_extra = 5,
#'                     nn_kind = "exact", ret_index = TRUE)
#' res$index
#' nn <- extended_knn_query(res$index, X[-train, ], n_neighbors = 5, nn_kind = "exact")
#' nn$idx[1:3, ]
#' @export
extended_knn_query <- function(index, query, n_neighbors, nn_kind = "approx", n_threads = 1,
                               verbose = FALSE, epsilon = 0.02) {
  index <- check_index(index)
  if (missing(n_neighbors)) stop_arg("'n_neighbors' is missing")
  n_ref <- nrow(index$data)
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1)
  if (n_neighbors > n_ref) {
    stop_arg("'n_neighbors' (", n_neighbors, ") is more than the index's ", n_ref, " reference rows")
  }
  nn_kind <- check_choice(nn_kind, "nn_kind", c("exact", "approx"))
  n_threads <- check_n_threads(n_threads)
  verbose <- check_flag(verbose, "verbose")
  epsilon <- check_number(epsilon, "epsilon", min = 0)
  data <- prepare_query(index, query)
  query_knn(index, data, n_neighbors, nn_kind, epsilon, n_threads, verbose)
}

#' Locally scaled nearest reference rows of new data
#'
#' The locally scaled neighbours (see [locally_scaled_knn()]) of each row of
#' `query` among the reference rows of an index: its `n_neighbors + n_extra`
#' nearest reference rows are the candidates; each candidate j gets the
#' value \eqn{d^2 / (\sigma_q \sigma_j)}{d^2 / (sigma_q sigma_j)}, where
#' \eqn{\sigma_j}{sigma_j} is the reference row's own local scale, stored in
#' the index, and \eqn{\sigma_q}{sigma_q} the query row's: its mean distance
#' to its 4th to 6th nearest reference rows (with the index's default
#' `scale_from = 5, scale_to = 7`); the `n_neighbors` best are returned by
#' increasing distance.
#'
#' This is the definition the reference rows' own graph follows. A reference
#' row's local scale is its mean distance to columns 5 to 7 of its extended
#' graph, whose column 1 is the row itself: its 4th to 6th nearest other
#' rows. A query row is new, so the same neighbours are its 4th to 6th nearest
#' reference rows, and its candidates and scores are computed from them as a
#' reference row's are from its own graph, with the reference rows' scales
#' left as they are: adding query rows changes nothing in the reference.
#'
#' **Counting neighbours.** The result has `n_neighbors` columns, all
#' reference rows (a query row is not among them). This is what
#' `uwot::umap_transform(X_new, model, nn_method = )` takes for a model
#' fitted with `uwot::umap(X, nn_method = lsnn_graph, ret_model = TRUE)` on a
#' graph from [locally_scaled_knn()] with the same `n_neighbors` (whose
#' columns count the row itself).
#'
#' @inheritParams extended_knn_query
#' @param n_neighbors Number of locally scaled neighbours per query row.
#' @param n_extra Extra candidates beyond `n_neighbors` (50, as
#'   [locally_scaled_knn()]); at most the number of reference rows are used.
#' @return A graph `list(idx, dist)` of two `nrow(query) x n_neighbors`
#'   matrices (reference row numbers and distances, by increasing distance).
#' @seealso [extended_knn_query()], [locally_scaled_knn()]
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' train <- seq(1, 150, by = 2)
#' res <- locally_scaled_knn(X[train, ], n_neighbors = 10, nn_kind = "exact",
#'                           ret_index = TRUE)
#' q <- locally_scaled_knn_query(res$index, X[-train, ], n_neighbors = 10)
#' dim(q$idx)
#' \donttest{
#' if (requireNamespace("uwot", quietly = TRUE)) {
#'   model <- uwot::umap(X[train, ], nn_method = res$lsnn, ret_model = TRUE)
#'   emb <- uwot::umap_transform(X[-train, ], model, nn_method = q)
#' }
#' }
#' @export
locally_scaled_knn_query <- function(index, query, n_neighbors = 15, n_extra = 50,
                                     nn_kind = "approx", n_threads = 1, verbose = FALSE,
                                     epsilon = 0.02) {
  index <- check_index(index)
  n_ref <- nrow(index$data)
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1)
  if (n_neighbors > n_ref) {
    stop_arg("'n_neighbors' (", n_neighbors, ") is more than the index's ", n_ref, " reference rows")
  }
  n_extra <- check_whole(n_extra, "n_extra", min = 0, clamp = TRUE)
  nn_kind <- check_choice(nn_kind, "nn_kind", c("exact", "approx"))
  n_threads <- check_n_threads(n_threads)
  verbose <- check_flag(verbose, "verbose")
  epsilon <- check_number(epsilon, "epsilon", min = 0)
  k <- as.integer(min(as.double(n_neighbors) + n_extra, n_ref))
  # The scale's columns count the row itself as column 1, the query's do not.
  if (is.null(index$sigma) || index$scale_to - 1L > k) {
    stop_arg("the local scales need the ", index$scale_to - 1L, " nearest reference rows of ",
             "each query row, more than the ", k, " searched; raise 'n_extra'")
  }
  data <- prepare_query(index, query)
  enn <- query_knn(index, data, k, nn_kind, epsilon, n_threads, verbose)
  .locally_scaled_query(enn$idx, enn$dist, index$sigma, n_neighbors, index$scale_from,
                        index$scale_to, n_threads)
}
