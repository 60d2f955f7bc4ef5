# The index of reference data and the queries of new rows against it.

# The version of the index's layout; readers refuse any other.
index_format_version <- 1L

# The index of prepared data (see prepare_data()) and its extended graph
# (the row itself in column 1); `pca`: the reduction that made the data
# (reduce_by_pca()), which projects the query rows, or NULL.
new_index <- function(data, metric, graph, scale_from, scale_to, n_threads, pca = NULL) {
  stored <- dense_or_rows(data)
  # (a Matrix takes list(NULL, NULL): it translates NULL with a message)
  if (data$kind == "sparse") dimnames(stored) <- list(NULL, NULL) else dimnames(stored) <- NULL
  # (a graph too narrow for the local scales serves the kNN queries alone)
  sigma <- if (scale_to <= ncol(graph$idx)) {
    .local_scales(graph$idx, graph$dist, scale_from, scale_to, n_threads)
  }
  index <- list(
    format_version = index_format_version,
    data = stored,
    metric = metric,
    graph = list(idx = graph$idx, dist = graph$dist),
    sigma = sigma,
    scale_from = as.integer(scale_from),
    scale_to = as.integer(scale_to),
    search = list(degree = 16L, n_entry = 0L)
  )
  if (!is.null(pca)) index$pca <- pca
  structure(index, class = "lsnn_index")
}

#' @method print lsnn_index
#' @export
print.lsnn_index <- function(x, ...) {
  kind <- if (inherits(x$data, "sparseMatrix")) "sparse" else "dense"
  cat(sprintf("lsnn index: %s reference rows x %d columns (%s, %s%s), graph of %d columns, local scales from columns %d to %d\n",
              format(nrow(x$data), big.mark = ","), ncol(x$data), kind, x$metric,
              if (is.null(x$pca)) "" else sprintf(", principal components of %d columns",
                                                  nrow(x$pca$rotation)),
              ncol(x$graph$idx), x$scale_from, x$scale_to))
  invisible(x)
}

# An index as every function that takes one reads it, checked whole once at
# entry (validate_index()).
check_index <- function(index) {
  if (!inherits(index, "lsnn_index")) {
    stop_arg("'index' must be an lsnn index, from extended_knn(ret_index = TRUE) or ",
             "locally_scaled_knn(ret_index = TRUE)")
  }
  validate_index(index, "index", function(...) {
    stop_arg("'index' is damaged or not an lsnn index: ", ...)
  }, "build it again with extended_knn(ret_index = TRUE)")
  index
}

# Every element of an index (see new_index()) present, of its type and
# dimensions, and consistent with the others, in O(size): the reference
# data (finite), a metric that reads it, its extended graph (one row per
# data row, the row itself first at distance 0, neighbours in range, once
# each, by distance), the local scales (one per row, finite, positive, those
# of the graph's columns scale_from to scale_to, present exactly when the
# graph has those columns), the search settings and the PCA that made the
# data, when there is one (validate_pca(); the data then dense and the
# metric one that PCA serves). `label` names the index
# in messages ("index", "model$index"); `damaged(...)` stops with the
# problem; `remedy` follows a format version this version does not read.
validate_index <- function(index, label, damaged, remedy) {
  el <- function(x) paste0("'", label, "$", x, "'")
  check_format_version(index$format_version, index_format_version, label, damaged, remedy)
  data <- validate_index_data(index, el, damaged)
  sparse <- inherits(data, "dgRMatrix") || inherits(data, "dgCMatrix")
  n <- nrow(data)
  graph <- validate_index_graph(index$graph, n, label, el, damaged)
  validate_index_scales(index, graph, el, damaged)
  search <- index$search
  if (!is.list(search) || !is_scalar_number(search$degree, min = 1, max = big_int, whole = TRUE) ||
      !is_scalar_number(search$n_entry, min = 0, max = big_int, whole = TRUE)) {
    damaged(el("search"), " must be list(degree, n_entry), whole numbers of at least 1 and 0")
  }
  if (!is.null(index$pca)) {
    validate_pca(index$pca, ncol(data), paste0(label, "$pca"), damaged)
    if (sparse) damaged(el("data"), " must be dense: it holds the principal components of ", el("pca"))
    if (!index$metric %in% pca_metrics) {
      damaged(el("metric"), " must be \"euclidean\" or \"cosine\" with ", el("pca"),
              " (it is \"", index$metric, "\")")
    }
  }
  # the graph's distances are those of the data in the metric, on a few rows
  # (a changed metric or data would otherwise answer queries silently wrong)
  bad <- index_distance_mismatch(data, graph, index$metric)
  if (bad > 0) {
    damaged(el("graph"), "'s distances are not the ", index$metric, " distances of ",
            el("data"), " (row ", bad, "): the metric, the data or the graph was changed")
  }
  invisible(index)
}

# validate_index()'s checks of the index's data (returned) and metric.
validate_index_data <- function(index, el, damaged) {
  data <- index$data
  sparse <- inherits(data, "dgRMatrix") || inherits(data, "dgCMatrix")
  if (sparse) {
    if (!isTRUE(methods::validObject(data, test = TRUE))) {
      damaged(el("data"), " is not a valid sparse matrix")
    }
    values <- data@x
  } else if (is.matrix(data) && (is.numeric(data) || is.logical(data))) {
    values <- data
  } else {
    damaged(el("data"), " must be a numeric matrix or a dgRMatrix (it is ", what_is(data), ")")
  }
  n <- nrow(data)
  if (n < 2 || ncol(data) < 1) {
    damaged(el("data"), " must have at least 2 rows and 1 column (it is ", what_is(data), ")")
  }
  if (!all_finite(values)) damaged(el("data"), " contains NA, NaN or infinite values")
  metrics <- if (sparse) c("euclidean", "cosine") else knn_metrics
  if (!is_word(index$metric, metrics)) {
    damaged(el("metric"), " must be one of ", paste0('"', metrics, '"', collapse = ", "),
            if (sparse) " for sparse data", " (it is ", what_is(index$metric), ")")
  }
  if (index$metric == "hamming") {
    bad <- .first_non_binary(data)
    if (bad[1] > 0) {
      damaged(el("data"), " must hold only 0 and 1 (or FALSE and TRUE) for metric = ",
              "\"hamming\" (row ", bad[1], ", column ", bad[2], " does not)")
    }
  } else if (is.logical(data)) {
    damaged(el("data"), " is logical, which only metric = \"hamming\" reads (the metric is \"",
            index$metric, "\")")
  }
  data
}

# validate_index()'s checks of the index's graph (returned) of n rows.
validate_index_graph <- function(graph, n, label, el, damaged) {
  if (!is.list(graph) || !is.matrix(graph$idx) || !is.integer(graph$idx) ||
      !is.matrix(graph$dist) || !is.double(graph$dist) ||
      !identical(dim(graph$idx), dim(graph$dist))) {
    damaged(el("graph"), " must be list(idx, dist), an integer and a double matrix of the ",
            "same dimensions")
  }
  if (nrow(graph$idx) != n) {
    damaged(el("graph"), " has ", nrow(graph$idx), " rows but ", el("data"), " has ", n)
  }
  k <- ncol(graph$idx)
  if (k < 2) damaged(el("graph"), " must have at least 2 columns (it has ", k, ")")
  problem <- .graph_problem(graph$idx, graph$dist, TRUE, TRUE, n)
  if (problem[1] != 0) {
    damaged(graph_problem_text(problem, graph$idx, paste0(label, "$graph"), n, TRUE, FALSE))
  }
  graph
}

# validate_index()'s checks of the local scales the index keeps, or leaves
# to the graph's columns.
validate_index_scales <- function(index, graph, el, damaged) {
  n <- nrow(graph$idx)
  k <- ncol(graph$idx)
  from <- index$scale_from
  to <- index$scale_to
  if (!is_scalar_number(from, min = 1, max = big_int, whole = TRUE)) {
    damaged(el("scale_from"), " must be a whole number of at least 1 (it is ", what_is(from), ")")
  }
  if (!is_scalar_number(to, min = from, max = big_int, whole = TRUE)) {
    damaged(el("scale_to"), " must be a whole number of at least scale_from = ", from,
            " (it is ", what_is(to), ")")
  }
  sigma <- index$sigma
  if (is.null(sigma)) {
    if (to <= k) {
      damaged(el("sigma"), " is missing, though the graph's ", k, " columns hold the local ",
              "scales (columns ", from, " to ", to, ")")
    }
  } else {
    if (to > k) {
      damaged(el("sigma"), " is present, though the graph's ", k, " columns are fewer than ",
              "scale_to = ", to)
    }
    if (!is.double(sigma) || !is.null(dim(sigma)) || length(sigma) != n) {
      damaged(el("sigma"), " must be a numeric vector of one local scale per reference row (",
              n, "; it is ", what_is(sigma), ")")
    }
    bad <- which(!is.finite(sigma) | sigma <= 0)
    if (length(bad) > 0) {
      damaged(el("sigma"), " must hold finite, positive local scales (row ", bad[1], " holds ",
              show_value(sigma[bad[1]]), ")")
    }
    # (recomputed from the graph in O(n): a scale that is not its row's
    # would silently mis-scale every query)
    expected <- .local_scales(graph$idx, graph$dist, as.integer(from), as.integer(to), 1L)
    off <- which(abs(sigma - expected) > 1e-8 * expected)
    if (length(off) > 0) {
      damaged(el("sigma"), " does not hold the local scales of ", el("graph"), " (row ",
              off[1], ")")
    }
  }
  invisible()
}

# The query rows in the index's form: list(kind, x) for dense data, or the
# rows stacked under the reference rows for sparse data. `name` is the
# argument that holds them.
prepare_query <- function(index, query, name = "query") {
  if (!is.null(index$pca)) {
    return(pca_new_rows(index$pca, query, index$metric, name,
                        "the index was built on data of"))
  }
  if ((is.numeric(query) || is.logical(query)) && is.null(dim(query))) {
    query <- matrix(query, nrow = 1)
  }
  sparse_index <- inherits(index$data, "sparseMatrix")
  if (!sparse_index && inherits(query, "Matrix")) query <- as.matrix(query)
  data <- prepare_data(query, index$metric, name, min_rows = 1)
  if (data$d != ncol(index$data)) {
    stop_arg("'", name, "' has ", data$d, " columns; the reference data has ", ncol(index$data))
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

query_knn <- function(index, data, k, nn_kind, epsilon, n_threads, verbose, seed) {
  exact <- nn_kind == "exact" || query_runs_exact(nrow(index$data), k)
  search <- c(index$graph, index$search, list(epsilon = epsilon))
  if (data$kind != "sparse") {
    ref <- index$data
    # (0/1 data of metric = "hamming" is read in its own type)
    if (data$kind == "dense" && !is.double(ref)) storage.mode(ref) <- "double"
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
#' search (the popcount tiles for `metric = "hamming"`), and the result is
#' proven exact in double precision: the nearest reference rows by distance,
#' ties by the smaller row number, as brute force gives them. Querying the reference rows themselves gives the reference's
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
#' runs instead. A walk stays within the part of the graph it starts in, so
#' each part the sample misses (groups of rows with no neighbours between
#' them, such as the clusters of a 2-D layout) adds its first row to the
#' starting rows, for the largest 4,096 parts.
#'
#' @param index An index, from [extended_knn()] or [locally_scaled_knn()]
#'   with `ret_index = TRUE` (see there for what it holds).
#' @param query The new data: a numeric matrix, a data frame (its numeric
#'   columns) or a sparse matrix of the Matrix package, with the reference
#'   data's columns; for an index of `metric = "hamming"` a logical matrix or
#'   a numeric matrix of 0 and 1. A numeric or logical vector is one row. No
#'   missing or infinite values. An index built with `pca` takes rows with
#'   the columns of the data before the reduction, and projects them through
#'   its centre and rotation.
#' @param n_neighbors Number of reference rows to find for each query row,
#'   at most the number of reference rows.
#' @param nn_kind `"exact"` or `"approx"`.
#' @param n_threads Number of threads (0 and 1 both run on the calling thread);
#'   `NULL` (the default) for [default_n_threads()].
#' @param verbose If `TRUE`, show progress and a summary line.
#' @param epsilon The approximate search's slack (at least 0).
#' @param seed `NULL` (the default) to draw random numbers from R's generator, so
#'   that [set.seed()] makes the result reproducible; or a whole number: the
#'   result then depends on it alone, and R's generator is left as it was.
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
extended_knn_query <- function(index, query, n_neighbors, nn_kind = "approx", n_threads = NULL,
                               verbose = FALSE, epsilon = 0.02, seed = NULL) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
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
  query_knn(index, data, n_neighbors, nn_kind, epsilon, n_threads, verbose, draw_seed())
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
#' The index must hold the local scales: one from [locally_scaled_knn()], or
#' from [extended_knn()] with `n_neighbors + n_extra` of at least
#' `scale_to - 1`.
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
#' @param seed `NULL` (the default) to draw random numbers from R's generator, so
#'   that [set.seed()] makes the result reproducible; or a whole number: the
#'   result then depends on it alone, and R's generator is left as it was.
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
                                     nn_kind = "approx", n_threads = NULL, verbose = FALSE,
                                     epsilon = 0.02, seed = NULL) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
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
  if (is.null(index$sigma)) {
    stop_arg("'index' holds no local scales: its graph has ", ncol(index$graph$idx),
             " columns, fewer than the ", index$scale_to, " of its scale_to; build it with ",
             "n_neighbors + n_extra of at least ", index$scale_to - 1L,
             " (extended_knn(X, n_neighbors, n_extra, ret_index = TRUE)), or with ",
             "locally_scaled_knn(X, ret_index = TRUE)")
  }
  k <- as.integer(min(as.double(n_neighbors) + n_extra, n_ref))
  # The scale's columns count the row itself as column 1, the query's do not.
  if (index$scale_to - 1L > k) {
    stop_arg("the local scales need the ", index$scale_to - 1L, " nearest reference rows of ",
             "each query row, more than the ", k, " searched; raise 'n_extra'")
  }
  data <- prepare_query(index, query)
  query_lsnn(index, data, n_neighbors, k, nn_kind, epsilon, n_threads, verbose, draw_seed())
}

# The n_neighbors locally scaled neighbours of prepared query rows among
# their k nearest reference rows (k at least scale_to - 1), the approximate
# search from `seed`.
query_lsnn <- function(index, data, n_neighbors, k, nn_kind, epsilon, n_threads, verbose, seed) {
  enn <- query_knn(index, data, k, nn_kind, epsilon, n_threads, verbose, seed)
  .locally_scaled_query(enn$idx, enn$dist, index$sigma, n_neighbors, index$scale_from,
                        index$scale_to, n_threads)
}

# The first of a few rows of an index whose nearest neighbour's distance in
# the graph is not the distance of the data in `metric`, or 0. Rows whose
# distance is not defined by a plain formula (zero or constant rows under
# cosine or correlation) are left out.
index_distance_mismatch <- function(data, graph, metric) {
  rows <- seq_len(min(nrow(data), 16L))
  for (i in rows) {
    j <- graph$idx[i, 2]
    a <- as.numeric(as.matrix(data[i, , drop = FALSE]))
    b <- as.numeric(as.matrix(data[j, , drop = FALSE]))
    d <- switch(metric,
      euclidean = sqrt(sum((a - b)^2)),
      manhattan = sum(abs(a - b)),
      hamming = mean(a != b),
      cosine = if (sum(a^2) > 0 && sum(b^2) > 0) 1 - sum(a * b) / sqrt(sum(a^2) * sum(b^2)),
      correlation = if (stats::sd(a) > 0 && stats::sd(b) > 0) 1 - stats::cor(a, b))
    if (is.null(d)) next
    stored <- graph$dist[i, 2]
    if (abs(d - stored) > 1e-6 * max(1, abs(d), abs(stored))) return(i)
  }
  0L
}
