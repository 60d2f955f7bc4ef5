#' Sort the neighbours of each row of a graph
#'
#' Reorders each row of a kNN graph by its distances, or by any other values
#' given for its entries. The order is stable: entries with equal values keep
#' their order within the row, in either direction.
#'
#' @param knn_graph A graph: `list(idx, dist)` of `n x k` matrices.
#' @param sort_values `NULL` to sort by `knn_graph$dist`, or an `n x k`
#'   numeric matrix of values to sort by.
#' @param decreasing Sort in decreasing order.
#' @param enforce_self_first Keep column 1 (the row itself) in place and sort
#'   only the other columns; a graph whose column 1 is not each row itself is
#'   then an error (give `FALSE` to sort every column).
#' @return The sorted graph, `list(idx, dist)`.
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' enn <- extended_knn(X, n_neighbors = 10, n_extra = 5, nn_kind = "exact")
#' lsd <- locally_scaled_distances(enn$idx, enn$dist)
#' by_scaled <- sort_knn_graph(enn, sort_values = lsd)
#' @export
sort_knn_graph <- function(knn_graph, sort_values = NULL, decreasing = FALSE,
                           enforce_self_first = TRUE) {
  enforce_self_first <- check_flag(enforce_self_first, "enforce_self_first")
  graph <- check_graph(knn_graph, "knn_graph", self_first = FALSE)
  # (column 1 is kept in place only where it is the row itself)
  if (enforce_self_first) {
    other <- which(graph$idx[, 1] != seq_len(nrow(graph$idx)))
    if (length(other) > 0) {
      stop_arg("the first column of 'knn_graph$idx' must be the row itself (row ", other[1],
               " is not) for enforce_self_first = TRUE; give enforce_self_first = FALSE to ",
               "sort every column")
    }
  }
  decreasing <- check_flag(decreasing, "decreasing")
  if (!is.null(sort_values)) {
    if (!is.matrix(sort_values) || !is.numeric(sort_values)) {
      stop_arg("'sort_values' must be a numeric matrix or NULL")
    }
    if (!identical(dim(sort_values), dim(graph$idx))) {
      stop_arg("'sort_values' must have the dimensions of the graph (",
               paste(dim(graph$idx), collapse = " x "), ")")
    }
    if (anyNA(sort_values)) stop_arg("'sort_values' contains NA or NaN")
    storage.mode(sort_values) <- "double"
  }
  .sort_graph_rows(graph$idx, graph$dist, sort_values, decreasing, enforce_self_first, 1L)
}

#' Keep the first columns of a graph
#'
#' @param graph A graph: `list(idx, dist)` of `n x k` matrices, each row in
#'   increasing distance (see [sort_knn_graph()]).
#' @param k Number of columns to keep (the row itself included), or `NULL`
#'   to return the graph unchanged.
#' @return The graph with its first `k` columns, as matrices even when
#'   `k = 1`.
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' enn <- extended_knn(X, n_neighbors = 30, n_extra = 0, nn_kind = "exact")
#' knn15 <- truncate_graph(enn, 15)
#' @export
truncate_graph <- function(graph, k = NULL) {
  if (is.null(k)) return(graph)
  # (the first columns are the nearest only in a sorted graph)
  graph <- check_graph(graph, "graph", self_first = FALSE, sorted = TRUE)
  k <- check_whole(k, "k", min = 1)
  if (k > ncol(graph$idx)) {
    stop_arg("'k' (", k, ") is more than the ", ncol(graph$idx), " columns of 'graph'")
  }
  list(idx = graph$idx[, seq_len(k), drop = FALSE], dist = graph$dist[, seq_len(k), drop = FALSE])
}

#' Overlap of two neighbour graphs
#'
#' The mean over rows of the fraction of the first `k` neighbours that two
#' graphs share, \eqn{|A_i \cap B_i| / k}{|A_i intersect B_i| / k}: 1 when the graphs
#' agree, near 0
#' when they share nothing. The row itself counts like any other neighbour
#' when it is among the first `k` columns, as it is in lsnn's graphs.
#'
#' rnndescent exports a function of the same name; whichever package is
#' attached last hides the other's (`lsnn::neighbor_overlap()` reaches this
#' one). Both take graphs or bare index matrices.
#'
#' @param g1,g2 Graphs over the same rows: `list(idx, dist)` (or just a list
#'   with `idx`) from lsnn, uwot, rnndescent or RcppHNSW, uwot's
#'   `ret_nn = TRUE` output (a list of graphs named by metric, of which there
#'   must be one), or a bare n x k matrix of row numbers.
#' @param k Number of leading columns compared; by default all the columns of
#'   the narrower graph.
#' @return A number between 0 and 1.
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' res <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact", ret_knn = TRUE)
#' neighbor_overlap(res$lsnn, res$knn)
#' # bare index matrices work too
#' neighbor_overlap(res$lsnn$idx, res$knn$idx, k = 5)
#' @export
neighbor_overlap <- function(g1, g2, k = NULL) {
  idx1 <- check_index_matrix(g1, "g1")
  idx2 <- check_index_matrix(g2, "g2")
  if (nrow(idx1) != nrow(idx2)) {
    stop_arg("'g1' and 'g2' must have the same number of rows (", nrow(idx1), " and ",
             nrow(idx2), ")")
  }
  k_max <- min(ncol(idx1), ncol(idx2))
  k <- if (is.null(k)) k_max else check_whole(k, "k", min = 1, max = k_max)
  .neighbor_overlap(idx1, idx2, k, 1L)
}
