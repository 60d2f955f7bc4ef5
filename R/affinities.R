#' Perplexity-calibrated input affinities (t-SNE, LargeVis)
#'
#' For each point, finds the precision \eqn{\beta_i} of the Gaussian weights
#' \eqn{\exp(-\beta_i d_{ij}^2)}{exp(-beta_i d_ij^2)} over its neighbours such that the Shannon
#' entropy (natural logarithm) of the normalised weights equals
#' `log(perplexity)` to within `1e-5`. The search is a Newton iteration on
#' \eqn{\log \beta}{log(beta)} safeguarded by bisection, of at most 200 steps per point;
#' points that do not reach the tolerance are counted and reported in a
#' warning (their weights are kept as they are). A point whose nearest
#' neighbours are tied at distance 0 (duplicated rows) may not reach the
#' target: it then gets the limit of ever larger precisions, equal weights
#' over those tied neighbours (all of them, when all its distances are
#' equal), and counts among the points in the warning. The conditional
#' probabilities are then symmetrised, \eqn{(p_{j|i} + p_{i|j}) / 2}{(p_j|i + p_i|j) / 2}, and
#' scaled to sum to 1.
#'
#' @param X A numeric data matrix (or data frame, of which the numeric
#'   columns are used): each point's neighbours are then all the other rows,
#'   with Euclidean distances. `NULL` when `nn_method` is given.
#' @param perplexity The target perplexity, greater than 1 and less than the
#'   number of neighbours of each point (`nrow(X) - 1` for a data matrix,
#'   `ncol(nn_method$idx) - 1` for a graph).
#' @param nn_method A neighbour graph, as returned by [extended_knn()] (or
#'   another package's, in a form listed there), of which each row's entries
#'   other than the point itself are its neighbours; used instead of `X`.
#' @param n_threads Number of threads, capped at what the machine can run
#'   (`RcppParallel::defaultNumThreads()`); `NULL` (the default) for
#'   [default_n_threads()]: every core R may use. Results do not depend on it.
#' @param ret_extra If `TRUE`, also return the precisions.
#' @param verbose If `TRUE`, show the calibration's progress (a cli progress
#'   bar on long runs) and a summary line.
#' @return A symmetric sparse matrix `P` (a `Matrix::dgCMatrix`, n x n, zero
#'   diagonal) summing to 1; with `ret_extra = TRUE`, a list with `P` and
#'   `beta`, the precisions (per squared distance) of each point (0 or
#'   `Inf` where that lies outside the double range, for data at scales
#'   near 1e±150 and beyond; `P` itself does not depend on the scale).
#' @examples
#' X <- as.matrix(iris[1:50, 1:4])
#' P <- perplexity_affinities(X, perplexity = 10)
#' sum(P)
#' # over each point's 30 nearest neighbours only
#' g <- extended_knn(X, n_neighbors = 30, n_extra = 0, nn_kind = "exact")
#' P30 <- perplexity_affinities(nn_method = g, perplexity = 10)
#' @export
perplexity_affinities <- function(X = NULL, perplexity = 30, nn_method = NULL, n_threads = NULL,
                                  ret_extra = FALSE, verbose = FALSE) {
  perplexity <- check_number(perplexity, "perplexity", min = 1, above = TRUE)
  n_threads <- check_n_threads(n_threads)
  ret_extra <- check_flag(ret_extra, "ret_extra")
  verbose <- check_flag(verbose, "verbose")
  inputs <- resolve_inputs(X, nn_method, "perplexity_affinities", both = FALSE)
  res <- perplexity_of_inputs(inputs, perplexity, n_threads, verbose)
  if (ret_extra) list(P = res$P, beta = res$beta) else res$P
}

# Perplexity affinities of resolve_inputs()'s points: over the graph when
# there is one, else over all pairs of the data. Returns list(P, beta).
perplexity_of_inputs <- function(inputs, perplexity, n_threads, verbose) {
  n <- inputs$n
  if (!is.null(inputs$graph)) {
    rows <- perplexity_rows_of_graph(inputs$graph, perplexity, n_threads, verbose)
    return(list(P = symmetric_perplexity(rows, n_threads), beta = rows$beta))
  }
  if (perplexity >= n - 1) {
    stop_arg("'perplexity' (", perplexity, ") must be less than the number of other ",
             "points (", n - 1L, ")")
  }
  if (as.double(n) * (n - 1) > .Machine$integer.max) {
    stop_arg("'X' has too many points (", n, ") for affinities over all pairs (a sparse ",
             "matrix holds at most 2^31 - 1 entries): give a neighbour graph from ",
             "extended_knn() as 'nn_method' instead")
  }
  res <- .perplexity_data(dense_data(inputs$data), perplexity, n_threads, simd_option(),
                          verbose)
  warn_calibration(res$n_failed, n)
  list(P = ne_dgc(n, res$p, res$i, res$x), beta = res$beta)
}

# The perplexity calibration of a checked graph's rows, in two steps so that
# a caller may let the graph go before the symmetric P is made (at 1e6
# points of 90 neighbours the graph is 1.1 GB, the conditional rows 1.1 GB
# and P 1.8 GB): the conditional rows p_{j|i}, list(p, i, x, beta), then
# symmetric_perplexity() of them.
perplexity_rows_of_graph <- function(g, perplexity, n_threads, verbose) {
  k <- ncol(g$idx)
  if (perplexity >= k - 1) {
    stop_arg("'perplexity' (", perplexity, ") must be less than the number of neighbours ",
             "of each point in the graph (", k - 1L, ")")
  }
  rows <- .perplexity_rows(g$idx, g$dist, perplexity, n_threads, simd_option(), verbose)
  warn_calibration(rows$n_failed, nrow(g$idx))
  rows
}

symmetric_perplexity <- function(rows, n_threads) {
  s <- .symmetric_perplexity(rows$p, rows$i, rows$x, n_threads)
  ne_dgc(length(rows$p) - 1L, s$p, s$i, s$x)
}

warn_calibration <- function(n_failed, n) {
  if (n_failed > 0) {
    warning(sprintf(paste0("perplexity calibration did not reach the tolerance for ",
                           "%d of %d points"), as.integer(n_failed), n), call. = FALSE)
  }
}

#' UMAP input affinities (fuzzy simplicial set memberships)
#'
#' The smoothed k-nearest neighbour memberships of UMAP:
#' \eqn{v_{j|i} = \exp(-\max(0, d_{ij} - \rho_i) / \sigma_i)}{v_j|i = exp(-max(0, d_ij -
#' rho_i) / sigma_i)}, where
#' \eqn{\rho_i} is the distance to the `local_connectivity`-th nearest
#' neighbour at a non-zero distance (interpolated between neighbours when
#' fractional) and \eqn{\sigma_i} is found by bisection (at most 64 steps, to
#' within `1e-5`, starting from 1 as UMAP does, or from the power of two
#' nearest the row's mean distance when that is beyond \eqn{2^{\pm 16}}{2^(+-16)}, so
#' that the result does not depend on the units of the distances) so that the
#' memberships of the point's neighbours sum to
#' \eqn{\log_2(k)}{log2(k)} `bandwidth`, k being the number of columns of the graph
#' (the point itself included). As in UMAP, \eqn{\sigma_i} is at least
#' `1e-3` times the mean distance of the point's row (of the whole graph when
#' \eqn{\rho_i = 0}). The memberships are then symmetrised by the fuzzy union
#' \eqn{V + V^T - V \circ V^T}{V + t(V) - V * t(V)}, mixed with the intersection
#' \eqn{V \circ V^T}{V * t(V)} in the proportion `1 - set_op_mix_ratio`.
#'
#' @param X A numeric data matrix (or data frame, or sparse matrix): the
#'   memberships are then computed over its `n_neighbors`-nearest neighbour
#'   graph (Euclidean, from the search [extended_knn()] describes under
#'   "Which search runs"). `NULL` when `nn_method` is given.
#' @param n_neighbors With `X`: the number of neighbours of each point, the
#'   point itself included (as uwot counts them).
#' @param nn_method A neighbour graph, the point itself in the first column
#'   (or another package's, in a form listed in [extended_knn()]), used
#'   instead of `X`.
#' @param local_connectivity The number of nearest neighbours each point is
#'   assumed to be fully connected to (at least 0).
#' @param bandwidth Scales the target sum of the memberships.
#' @param set_op_mix_ratio Between 0 (intersection) and 1 (union).
#' @param ret_extra If `TRUE`, also return `sigma` and `rho`.
#' @param n_threads Number of threads, capped at what the machine can run
#'   (`RcppParallel::defaultNumThreads()`); `NULL` (the default) for
#'   [default_n_threads()]: every core R may use. Results do not depend on it.
#' @param verbose If `TRUE`, show the calculation's progress (a cli progress
#'   bar on long runs) and a summary line.
#' @return A symmetric sparse matrix `V` (`Matrix::dgCMatrix`, n x n), or with
#'   `ret_extra = TRUE` a list with `V`, `sigma` and `rho`.
#' @examples
#' X <- as.matrix(iris[1:50, 1:4])
#' V <- umap_affinities(X, n_neighbors = 10)
#' # the same from a graph
#' g <- extended_knn(X, n_neighbors = 9, n_extra = 0, nn_kind = "exact")
#' all.equal(V, umap_affinities(nn_method = g))
#' @export
umap_affinities <- function(X = NULL, n_neighbors = 15, nn_method = NULL,
                            local_connectivity = 1, bandwidth = 1,
                            set_op_mix_ratio = 1, ret_extra = FALSE, n_threads = NULL,
                            verbose = FALSE) {
  n_threads <- check_n_threads(n_threads)
  verbose <- check_flag(verbose, "verbose")
  inputs <- resolve_inputs(X, nn_method, "umap_affinities", both = FALSE)
  if (is.null(inputs$graph)) {
    # (capped at the number of points, as the search caps it)
    n_neighbors <- min(check_whole(n_neighbors, "n_neighbors", min = 2, clamp = TRUE), inputs$n)
  }
  local_connectivity <- check_number(local_connectivity, "local_connectivity", min = 0)
  bandwidth <- check_number(bandwidth, "bandwidth", min = 0, above = TRUE)
  set_op_mix_ratio <- check_number(set_op_mix_ratio, "set_op_mix_ratio", min = 0, max = 1)
  ret_extra <- check_flag(ret_extra, "ret_extra")
  g <- graph_of_inputs(inputs, n_neighbors, n_threads, verbose, "umap_affinities", draw_seed())
  res <- umap_of_graph(g, local_connectivity, bandwidth, set_op_mix_ratio, n_threads, verbose)
  if (ret_extra) res else res$V
}

# UMAP memberships of a checked graph: list(V, sigma, rho).
umap_of_graph <- function(g, local_connectivity = 1, bandwidth = 1, set_op_mix_ratio = 1,
                          n_threads = 1L, verbose = FALSE) {
  res <- .umap_graph(g$idx, g$dist, local_connectivity, bandwidth, set_op_mix_ratio,
                     n_threads, verbose)
  list(V = ne_dgc(nrow(g$idx), res$p, res$i, res$x), sigma = res$sigma, rho = res$rho)
}

#' UMAP's output curve parameters
#'
#' Fits \eqn{1 / (1 + a d^{2b})}{1 / (1 + a d^(2b))} by least squares to the curve that is 1 up
#' to `min_dist` and decays as \eqn{\exp(-(d - min\_dist) / spread)}{exp(-(d - min_dist)
#' / spread)} beyond,
#' on 300 points of \eqn{[0, 3 spread]}, as UMAP does.
#'
#' The curve only depends on `min_dist / spread` up to scale, so the fit is
#' made for `spread = 1` and scaled: \eqn{a} becomes \eqn{a / spread^{2b}}{a / spread^(2b)};
#' it is as good for `spread = 1e-8` as for `spread = 1`.
#'
#' @param spread The scale of the decay (positive).
#' @param min_dist The distance up to which the curve is 1, from 0 to
#'   `spread` (as in UMAP).
#' @return A named vector `c(a, b)`, both positive.
#' @examples
#' umap_ab()  # a = 1.577, b = 0.895
#' umap_ab(spread = 2, min_dist = 0.5)
#' @export
umap_ab <- function(spread = 1, min_dist = 0.1) {
  spread <- check_number(spread, "spread", min = 0, above = TRUE)
  min_dist <- check_number(min_dist, "min_dist", min = 0)
  if (min_dist > spread) {
    stop_arg("'min_dist' (", min_dist, ") must not be greater than 'spread' (", spread, ")")
  }
  .umap_ab(spread, min_dist)
}

# A symmetric n x n dgCMatrix from the core's compressed columns.
ne_dgc <- function(n, p, i, x) {
  methods::new("dgCMatrix", i = i, p = p, x = x, Dim = c(as.integer(n), as.integer(n)))
}

#' @importClassesFrom Matrix dgCMatrix
#' @importFrom methods new as
NULL
