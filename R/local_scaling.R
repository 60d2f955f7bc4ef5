#' Locally scaled nearest neighbours
#'
#' The neighbour selection of PaCMAP, built on the local scale of TriMap:
#' find each row's extended neighbourhood, give every candidate the locally
#' scaled value \eqn{d_{ij}^2 / (\sigma_i \sigma_j)}{d_ij^2 / (sigma_i sigma_j)}, where
#' \eqn{\sigma_i} is
#' the mean distance from row i to its 4th to 6th nearest other rows, and keep
#' the `n_neighbors` best. Rows in dense regions thereby lend neighbours to
#' rows in sparse ones less readily than a plain kNN graph does.
#'
#' **Counting neighbours.** Here `n_neighbors` counts the row itself, as
#' uwot does: the graph has `n_neighbors` columns, the row and
#' `n_neighbors - 1` others, so `locally_scaled_knn(X, n_neighbors = 15)` has
#' 15. ([extended_knn()] counts only the others; both conventions come from
#' the method's original code.)
#'
#' With `pca`, the neighbours are those of the rows' first principal
#' components, as in [extended_knn()] ("PCA first").
#'
#' `locally_scaled_knn()` runs [extended_knn()] and then [enn_to_lsnn()];
#' use those two directly to reuse one extended graph for several
#' `n_neighbors`.
#'
#' The scaled values only choose the neighbours: the graph returned lists
#' them with their ordinary distances, in increasing order (equal distances
#' by row number), ready for `uwot::umap(X, nn_method = )`.
#'
#' @inheritParams extended_knn
#' @param n_neighbors Number of neighbours to return per row, the row itself
#'   included (as uwot counts them); capped at `n - 1`.
#' @param n_extra Extra neighbours searched beyond `n_neighbors` to choose
#'   from (50, as in PaCMAP).
#' @param scale_from,scale_to The columns of the extended graph whose mean
#'   distance is the local scale \eqn{\sigma_i}. Column 1 is the row itself,
#'   so the default 5 to 7 are the 4th to 6th neighbours. \eqn{\sigma_i} is
#'   at least 1e-10 (PaCMAP's floor), so rows of duplicates give finite
#'   values. The floor is absolute, not relative to the data: where those
#'   neighbour distances are near or below 1e-10 (data measured in tiny
#'   units, say multiplied by 1e-12, or rows with several near-duplicates)
#'   it replaces the real local scales, and the neighbours chosen differ from
#'   those of the same data in ordinary units. Rescale such data first.
#' @param ret_knn If `TRUE`, also return the plain kNN graph of the same size.
#' @param ret_index If `TRUE`, also return an index of the data (see
#'   [extended_knn()]) for [locally_scaled_knn_query()] and
#'   [extended_knn_query()], holding the extended graph and the local scales.
#' @param seed `NULL` (the default) to draw random numbers from R's generator, so
#'   that [set.seed()] makes the result reproducible; or a whole number: the
#'   result then depends on it alone, and R's generator is left as it was.
#' @return A graph `list(idx, dist)` with `n_neighbors` columns (see
#'   [extended_knn()] for the format); with `ret_knn = TRUE` or `ret_index =
#'   TRUE`, a list with element `lsnn`, that graph, and `knn`, the plain kNN
#'   graph of the same size, and `index`, as asked.
#' @references
#' Zelnik-Manor, L. and Perona, P. (2004). Self-tuning spectral clustering.
#' \emph{Advances in Neural Information Processing Systems}, 17.
#'
#' Amid, E. and Warmuth, M. K. (2019). TriMap: Large-scale dimensionality
#' reduction using triplets. \emph{arXiv:1910.00204}.
#'
#' Wang, Y., Huang, H., Rudin, C. and Shaposhnik, Y. (2021). Understanding how
#' dimension reduction tools work: an empirical approach to deciphering t-SNE,
#' UMAP, TriMap, and PaCMAP for data visualization. \emph{Journal of Machine
#' Learning Research}, 22(201), 1-73.
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' res <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact", ret_knn = TRUE)
#' neighbor_overlap(res$lsnn, res$knn)
#' \donttest{
#' if (requireNamespace("uwot", quietly = TRUE)) {
#'   emb <- uwot::umap(X, nn_method = res$lsnn)
#' }
#' }
#' @export
locally_scaled_knn <- function(X, n_neighbors = 15, n_extra = 50, scale_from = 5, scale_to = 7,
                               n_threads = NULL, nn_kind = "approx", ret_knn = FALSE,
                               verbose = FALSE, metric = "euclidean",
                               nn_args = approx_control(), ret_index = FALSE, pca = NULL,
                               pca_center = TRUE, seed = NULL) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
  # both are capped by the number of rows, so any larger whole number is taken
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1, clamp = TRUE)
  n_extra <- check_whole(n_extra, "n_extra", min = 0, clamp = TRUE, max = big_int - 1L)
  ret_knn <- check_flag(ret_knn, "ret_knn")
  ret_index <- check_flag(ret_index, "ret_index")
  n <- NROW(X)
  if (n >= 2) n_neighbors <- min(n_neighbors, n - 1L)
  lsnn_check_width(n, n_neighbors, n_extra, scale_from, scale_to, missing(scale_to))
  enn <- extended_knn(X, n_neighbors, n_extra = n_extra, n_threads = n_threads,
                      nn_kind = nn_kind, verbose = verbose, metric = metric,
                      nn_args = nn_args, ret_index = ret_index, scale_from = scale_from,
                      scale_to = scale_to, pca = pca, pca_center = pca_center)
  index <- NULL
  if (ret_index) {
    index <- enn$index
    enn <- enn$enn
  }
  # All n_extra + 1 further columns of the extended graph are candidates.
  lsnn <- enn_to_lsnn(enn, n_neighbors, scale_from, scale_to, n_extra = n_extra + 1L,
                      n_threads = n_threads)
  if (!ret_knn && !ret_index) return(lsnn)
  out <- list(lsnn = lsnn)
  if (ret_knn) out$knn <- truncate_graph(enn, n_neighbors)
  if (ret_index) out$index <- index
  out
}

# The extended graph of locally_scaled_knn() holds min(n, n_neighbors +
# n_extra + 1) columns; its local scales read columns scale_from to scale_to.
# A graph too narrow is told in the terms of the call: too few rows, or too
# few neighbours (`default_to`: scale_to was left at its default).
lsnn_check_width <- function(n, n_neighbors, n_extra, scale_from, scale_to, default_to) {
  scale <- check_scale_columns(scale_from, scale_to, big_int)
  to <- paste0("'scale_to' (", scale[2], if (default_to) " by default", ")")
  remedy <- paste0("; a row's local scale is its mean distance to the columns 'scale_from' ",
                   "to 'scale_to' of its neighbours, the row itself first")
  if (n >= 2 && n < scale[2]) {
    stop_arg("'X' has ", n, " rows; locally scaled neighbours need at least as many as ", to,
             remedy, ": give more rows, or a smaller 'scale_to' (and 'scale_from')")
  }
  width <- as.double(n_neighbors) + n_extra + 1
  if (n >= 2 && width < scale[2]) {
    stop_arg("'n_neighbors' + 'n_extra' + 1 (", n_neighbors, " + ", n_extra, " + 1) columns ",
             "are fewer than ", to, remedy, ": raise 'n_extra', or lower 'scale_to' (and ",
             "'scale_from')")
  }
  invisible(scale)
}

#' Locally scaled neighbours from an extended graph
#'
#' Picks the locally scaled nearest neighbours (see [locally_scaled_knn()])
#' from an extended kNN graph, such as one from [extended_knn()] or any other
#' source in the same format: uwot's, rnndescent's or RcppHNSW's graphs,
#' or uwot's `ret_nn = TRUE` output (`$nn`) when it holds one metric. Each
#' row must list the row itself first, at distance 0, then its neighbours by
#' non-decreasing distance; an error names the first row that does not.
#'
#' **Counting neighbours.** Here `n_neighbors` counts the row itself, as in
#' [locally_scaled_knn()] and uwot: `enn_to_lsnn(enn, n_neighbors = 15)` has
#' 15 columns, the row and 14 others. ([extended_knn()] counts only the
#' others: `extended_knn(X, 15, 50)` has 66 columns.)
#'
#' @param enn An extended kNN graph: `list(idx, dist)`, n x k matrices, each
#'   row starting with the row itself.
#' @param n_neighbors Number of neighbours to return per row, the row itself
#'   included; capped at `n - 1`.
#' @inheritParams locally_scaled_knn
#' @param n_extra Candidates considered beyond `n_neighbors`: the first
#'   `n_neighbors + n_extra` columns of `enn` are used (all of them when it
#'   has fewer).
#' @param n_threads Number of threads, capped at what the machine can run
#'   (`RcppParallel::defaultNumThreads()`); `NULL` (the default) for
#'   [default_n_threads()]: every core R may use. Results do not depend on it.
#' @return A graph `list(idx, dist)` with `min(n_neighbors, n - 1)` columns,
#'   the row itself first, then its chosen neighbours by increasing distance.
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' enn <- extended_knn(X, n_neighbors = 15, n_extra = 50, nn_kind = "exact")
#' lsnn15 <- enn_to_lsnn(enn, n_neighbors = 15)
#' lsnn10 <- enn_to_lsnn(enn, n_neighbors = 10)
#' @export
enn_to_lsnn <- function(enn, n_neighbors, scale_from = 5, scale_to = 7, n_extra = 51,
                        n_threads = NULL) {
  enn <- check_graph(enn, "enn")
  if (missing(n_neighbors)) stop_arg("'n_neighbors' is missing")
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1, clamp = TRUE)
  n_extra <- check_whole(n_extra, "n_extra", min = 0, clamp = TRUE)
  n_threads <- check_n_threads(n_threads)
  n <- nrow(enn$idx)
  n_cols <- as.integer(min(ncol(enn$idx), as.double(n_neighbors) + n_extra))
  n_neighbors <- max(min(n_neighbors, n - 1L), 1L)
  if (n_neighbors > n_cols) {
    stop_arg("'n_neighbors' (", n_neighbors, if (n_neighbors == n - 1L) ", capped at n - 1",
             ") is more than the ", n_cols, " columns 'enn' has to choose from")
  }
  scale <- check_scale_columns(scale_from, scale_to, n_cols)
  .locally_scaled_graph(enn$idx, enn$dist, n_cols, n_neighbors, scale[1], scale[2], n_threads)
}

#' Locally scaled distances of a graph
#'
#' For every entry of a kNN graph, the locally scaled squared distance
#' \eqn{d_{ij}^2 / (\sigma_i \sigma_j)}{d_ij^2 / (sigma_i sigma_j)}, where
#' \eqn{\sigma_i}{sigma_i} is the mean of row i's distances in columns `scale_from`
#' to `scale_to` (at least 1e-10: see `scale_from` for where this floor changes
#' the result).
#'
#' @param idx,dist The graph's `n x k` index and distance matrices (row i's
#'   first column is row i itself).
#' @inheritParams locally_scaled_knn
#' @return An `n x k` matrix of locally scaled values, aligned with `idx`.
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' enn <- extended_knn(X, n_neighbors = 15, n_extra = 10, nn_kind = "exact")
#' lsd <- locally_scaled_distances(enn$idx, enn$dist)
#' lsd[1:3, 1:5]
#' @export
locally_scaled_distances <- function(idx, dist, scale_from = 5, scale_to = 7) {
  graph <- check_graph(list(idx = idx, dist = dist), "graph")
  scale <- check_scale_columns(scale_from, scale_to, ncol(graph$idx))
  .locally_scaled_distances(graph$idx, graph$dist, scale[1], scale[2], 1L)
}
