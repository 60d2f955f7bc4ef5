#' Embedding quality measures
#'
#' Numbers that say how well an embedding `Y` keeps the structure of the data
#' `X` it was computed from, the same way for every method, so that
#' embeddings can be compared in a table rather than by eye. Local measures
#' look at each point's nearest neighbours; global ones at the order of
#' distances between random points.
#'
#' **Neighbour preservation** (`neighbor_preservation()`): the mean over all
#' points \eqn{i} of \eqn{|N_k(i) \cap U_k(i)| / k}{|intersect(N_k(i), U_k(i))| / k}, where \eqn{N_k(i)} are
#' the \eqn{k} nearest neighbours of \eqn{i} in `X` and \eqn{U_k(i)} those in
#' `Y`, the point itself never counted (Lee and Verleysen, 2009; Kobak and
#' Berens, 2019). Both neighbour sets are exact, with ties ranked by row
#' number: those of `X` from [extended_knn()] with `nn_kind = "exact"`, those
#' of a 2-D or 3-D embedding from a k-d tree searched in double precision
#' (the same sets, in a small fraction of the time on the nearly coincident
#' points embeddings tend to have; wider embeddings go through the exact
#' search as well). In place of the data, `X` may
#' be a graph from lsnn (`list(idx, dist)`, the point itself in column 1),
#' whose columns 2 to `k + 1` are then taken as \eqn{N_k(i)}: pass a
#' [locally_scaled_knn()] graph to ask how well the embedding keeps the
#' locally scaled neighbours instead.
#'
#' **Trustworthiness and continuity** (Venna and Kaski, 2001, 2006). Let
#' \eqn{r(i, j)} be the rank of \eqn{j} among the other points by distance
#' from \eqn{i} in `X` (1 for the nearest) and \eqn{\hat r(i, j)}{r'(i, j)} the same in
#' `Y`. Trustworthiness penalises *intruders*, points among the \eqn{k}
#' nearest in the embedding but not in the data; continuity penalises
#' *extruders*, the reverse:
#' \deqn{T(k) = 1 - \frac{2}{m k (2n - 3k - 1)} \sum_{i \in S}
#'   \sum_{j \in U_k(i) \setminus N_k(i)} (r(i, j) - k),}{T(k) = 1 - 2 / (m k (2n - 3k - 1)) *
#'   sum over i in S, j in U_k(i) but not N_k(i), of (r(i, j) - k),}
#' \deqn{C(k) = 1 - \frac{2}{m k (2n - 3k - 1)} \sum_{i \in S}
#'   \sum_{j \in N_k(i) \setminus U_k(i)} (\hat r(i, j) - k),}{C(k) = 1 - 2 / (m k (2n - 3k - 1)) *
#'   sum over i in S, j in N_k(i) but not U_k(i), of (r'(i, j) - k),}
#' where \eqn{S} is the set of \eqn{m} evaluated points. With \eqn{S} all
#' \eqn{n} points this is Venna and Kaski's definition; the factor scales
#' each to 1 for a perfect embedding and about 0.5 for a random one (it is
#' the largest possible penalty only for \eqn{k < n / 2}, hence that
#' limit). When \eqn{n} exceeds `n_points` (default 2,000), \eqn{S} is a
#' simple random sample of `n_points` points drawn with [sample.int()] (so
#' [set.seed()] makes it reproducible), and the result estimates the full
#' measure without bias; the ranks are still taken against all \eqn{n}
#' points. Each evaluated point is compared with every point in both spaces
#' (single-precision matrix products, its neighbours and ranks then decided
#' on double-precision distances wherever the float rounding could change
#' them), so the time grows as `n_points * n * (ncol(X) + ncol(Y))` and the
#' memory as `n` per thread, never `n x n`.
#'
#' **Random triplet accuracy** (`random_triplet_accuracy()`, as in Wang et
#' al., 2021): the share of triplets \eqn{(i, j, l)} of distinct points for
#' which \eqn{d(i, j) - d(i, l)} has the same sign in `X` and in `Y` (equal
#' distances in both count as kept; equal in one space only do not). Computed
#' on `n_triplets` (default \eqn{10^6}) triplets drawn uniformly, or on every
#' triplet once (each \eqn{i} with each pair \eqn{j < l}{j < l}) when `n_triplets` is
#' at least their number, \eqn{n (n - 1) (n - 2) / 2}.
#'
#' **Distance correlation** (`distance_correlation()`): Spearman's rank
#' correlation between the distances in `X` and in `Y` over `n_pairs`
#' (default \eqn{10^6}) pairs of distinct points drawn uniformly, or over all
#' \eqn{n (n - 1) / 2} pairs when `n_pairs` is at least that (ties get their
#' average rank, as in `cor(method = "spearman")`). It is a global measure,
#' used for example by Kobak and Linderman (2021); it is not Szekely's
#' "distance correlation".
#'
#' The triplets and pairs are drawn from a seed taken from R's generator only
#' when they are sampled, so [set.seed()] makes the sampled values
#' reproducible and the exhaustive ones do not touch the generator. The
#' standard error of the sampled triplet accuracy is at most
#' `0.5 / sqrt(n_triplets)` (0.0005 at the default); that of sampled
#' trustworthiness and continuity is the standard deviation of the per-point
#' values (typically a few hundredths) over `sqrt(n_points)`. All results are
#' the same for every `n_threads`.
#' Distances in `Y` are Euclidean; in `X` they follow `metric`, as in
#' [extended_knn()]. Ties between equally distant points are ranked by row
#' number, as lsnn's neighbour search orders them.
#'
#' `embedding_quality()` computes them all (sharing the work: the data are
#' prepared once), and returns a one-row data frame, so that a table over
#' data sets and methods is `do.call(rbind, ...)` away. Its `nn` argument
#' takes a kNN graph of `X` with at least `k + 1` columns (from
#' [extended_knn()], exact for exact results) to save the exact search when
#' several embeddings of the same data are measured.
#'
#' @param X The data: a numeric matrix, a data frame (its numeric columns) or
#'   a `Matrix::dgCMatrix`, one row per point; for `neighbor_preservation()`
#'   also a neighbour graph `list(idx, dist)` from lsnn (or uwot's
#'   `ret_nn = TRUE` output holding one graph).
#' @param Y The embedding: a numeric matrix (or data frame) with one row per
#'   row of `X`.
#' @param k Number of nearest neighbours, the point itself not counted (so
#'   `k = 15` compares the neighbours a `n_neighbors = 16` graph holds).
#'   Trustworthiness and continuity need `k < n / 2`.
#' @param n_points Number of points at which trustworthiness and continuity
#'   are evaluated when there are more; all points otherwise.
#' @param n_triplets Number of random triplets.
#' @param n_pairs Number of random pairs (at most \eqn{10^7}; memory grows by
#'   about 40 bytes a pair).
#' @param nn Optional kNN graph of `X` (`list(idx, dist)`, at least `k + 1`
#'   columns, the point itself first) used for neighbour preservation in
#'   place of an exact search.
#' @param metric Distance in `X`: `"euclidean"`, `"cosine"`, `"correlation"`,
#'   `"manhattan"` (sparse data: the first two) or `"hamming"` (`X` a
#'   logical matrix or a numeric matrix of 0 and 1; the fraction of columns
#'   that differ).
#' @param n_threads Number of threads, capped at what the machine can run
#'   (`RcppParallel::defaultNumThreads()`); `NULL` (the default) for
#'   [default_n_threads()]: every core R may use. Results do not depend on it.
#' @return A number between 0 and 1 (a correlation between -1 and 1 for
#'   `distance_correlation()`); for `embedding_quality()` a data frame with
#'   one row and columns `n`, `k`, `neighbor_preservation`,
#'   `trustworthiness`, `continuity`, `random_triplet_accuracy` and
#'   `distance_correlation`.
#' @references
#' Venna, J. and Kaski, S. (2001). Neighborhood preservation in nonlinear
#' projection methods: an experimental study. In *Artificial Neural Networks
#' - ICANN 2001*, Lecture Notes in Computer Science 2130, 485-491.
#'
#' Venna, J. and Kaski, S. (2006). Local multidimensional scaling. *Neural
#' Networks*, 19(6-7), 889-899.
#'
#' Lee, J. A. and Verleysen, M. (2009). Quality assessment of dimensionality
#' reduction: rank-based criteria. *Neurocomputing*, 72(7-9), 1431-1443.
#'
#' Kobak, D. and Berens, P. (2019). The art of using t-SNE for single-cell
#' transcriptomics. *Nature Communications*, 10, 5416.
#'
#' Wang, Y., Huang, H., Rudin, C. and Shaposhnik, Y. (2021). Understanding
#' how dimension reduction tools work: an empirical approach to deciphering
#' t-SNE, UMAP, TriMap, and PaCMAP for data visualization. *Journal of
#' Machine Learning Research*, 22(201), 1-73.
#'
#' Kobak, D. and Linderman, G. C. (2021). Initialization is critical for
#' preserving global data structure in both t-SNE and UMAP. *Nature
#' Biotechnology*, 39, 156-157.
#' @seealso [neighbor_overlap()] to compare two graphs.
#' @examples
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' Y <- prcomp(X)$x[, 1:2]
#' neighbor_preservation(X, Y, k = 10)
#' trustworthiness(X, Y, k = 10)
#' continuity(X, Y, k = 10)
#' set.seed(1)
#' random_triplet_accuracy(X, Y, n_triplets = 1e4)
#' distance_correlation(X, Y)
#' # A table over methods:
#' set.seed(1)
#' embeddings <- list(pca = Y, random = matrix(rnorm(2 * nrow(X)), ncol = 2))
#' do.call(rbind, lapply(names(embeddings), function(m)
#'   cbind(method = m, embedding_quality(X, embeddings[[m]], k = 10))))
#' @name embedding-quality
NULL

#' @rdname embedding-quality
#' @export
neighbor_preservation <- function(X, Y, k = 15, metric = "euclidean", n_threads = NULL) {
  run_quality(X, Y, "np", k = k, metric = metric, n_threads = n_threads,
              graph_ok = TRUE)$neighbor_preservation
}

#' @rdname embedding-quality
#' @export
trustworthiness <- function(X, Y, k = 15, n_points = 2000, metric = "euclidean",
                            n_threads = NULL) {
  run_quality(X, Y, "tc", k = k, n_points = n_points, metric = metric,
              n_threads = n_threads)$trustworthiness
}

#' @rdname embedding-quality
#' @export
continuity <- function(X, Y, k = 15, n_points = 2000, metric = "euclidean", n_threads = NULL) {
  run_quality(X, Y, "tc", k = k, n_points = n_points, metric = metric,
              n_threads = n_threads)$continuity
}

#' @rdname embedding-quality
#' @export
random_triplet_accuracy <- function(X, Y, n_triplets = 1e6, metric = "euclidean",
                                    n_threads = NULL) {
  run_quality(X, Y, "triplets", n_triplets = n_triplets, metric = metric,
              n_threads = n_threads)$random_triplet_accuracy
}

#' @rdname embedding-quality
#' @export
distance_correlation <- function(X, Y, n_pairs = 1e6, metric = "euclidean", n_threads = NULL) {
  run_quality(X, Y, "pairs", n_pairs = n_pairs, metric = metric,
              n_threads = n_threads)$distance_correlation
}

#' @rdname embedding-quality
#' @export
embedding_quality <- function(X, Y, k = 15, nn = NULL, n_points = 2000, n_triplets = 1e6,
                              n_pairs = 1e6, metric = "euclidean", n_threads = NULL) {
  res <- run_quality(X, Y, c("np", "tc", "triplets", "pairs"), k = k, nn = nn,
                     n_points = n_points, n_triplets = n_triplets, n_pairs = n_pairs,
                     metric = metric, n_threads = n_threads)
  data.frame(n = res$n, k = res$k,
             neighbor_preservation = res$neighbor_preservation,
             trustworthiness = res$trustworthiness,
             continuity = res$continuity,
             random_triplet_accuracy = res$random_triplet_accuracy,
             distance_correlation = res$distance_correlation)
}

# Checks the arguments of the measures in `what` ("np", "tc", "triplets",
# "pairs"), draws what is random, and runs the core once for all of them.
run_quality <- function(X, Y, what, k = 15, nn = NULL, n_points = 2000, n_triplets = 1e6,
                        n_pairs = 1e6, metric = "euclidean", n_threads = 1,
                        graph_ok = FALSE) {
  metric <- check_choice(metric, "metric", knn_metrics)
  n_threads <- check_n_threads(n_threads)
  # X is the data, with `nn` its graph for neighbour preservation; or, for
  # neighbor_preservation() alone, the graph in place of the data
  graph_x <- is_graph_like(X)
  if (graph_x && !graph_ok) {
    stop_arg("'X' must be the data, not a graph: only neighbor_preservation() takes a graph",
             if ("np" %in% what) " (embedding_quality() takes one as 'nn')")
  }
  if (!graph_x && is.null(X)) {
    stop_arg("'X' must be a numeric matrix, a data frame or a sparse Matrix, with one row per ",
             "observation")
  }
  name <- if (graph_x) "X" else "nn"
  inputs <- resolve_inputs(if (!graph_x) X, if (graph_x) X else if ("np" %in% what) nn,
                           "embedding_quality", metric = metric, graph_arg = name)
  data <- inputs$data
  nn <- inputs$graph
  n <- inputs$n
  y <- prepare_data(Y, "euclidean", "Y")
  if (y$kind != "dense") stop_arg("'Y' must be a dense numeric matrix (the embedding)")
  if (y$n != n) {
    stop_arg("'Y' must have one row per row of 'X' (", n, "); it has ", y$n)
  }
  out <- list(n = n, k = NA_integer_)

  if (any(c("np", "tc") %in% what)) {
    k_max <- if ("tc" %in% what) ceiling(n / 2) - 1 else n - 1
    if (k_max < 1) stop_arg("'X' has too few rows (", n, ") for k nearest neighbours")
    k <- check_whole(k, "k", min = 1, max = k_max)
    out$k <- k
  } else {
    k <- 1L
  }
  if (!is.null(nn) && ncol(nn$idx) < k + 1) {
    stop_arg("'", name, "' has ", ncol(nn$idx), " columns; k = ", k, " needs k + 1 = ",
             k + 1, " (the point itself first)")
  }
  rows <- integer(0)
  if ("tc" %in% what) {
    n_points <- check_whole(n_points, "n_points", min = 1)
    rows <- if (n > n_points) sort(sample.int(n, n_points)) - 1L else seq_len(n) - 1L
  }
  if ("triplets" %in% what) {
    if (n < 3) stop_arg("'X' must have at least 3 rows for triplets")
    n_triplets <- check_sample_size(n_triplets, "n_triplets", max = 1e10)
  }
  if ("pairs" %in% what) n_pairs <- check_sample_size(n_pairs, "n_pairs", max = 1e7)
  all_triplets <- n * (n - 1) * (n - 2) / 2
  all_pairs <- n * (n - 1) / 2
  sampled <- ("triplets" %in% what && n_triplets < all_triplets) ||
    ("pairs" %in% what && n_pairs < all_pairs)
  seed <- if (sampled) draw_seed() else c(0L, 0L)

  flags <- c("np", "tc", "triplets", "pairs") %in% what
  res <- .quality_measures(data, y$x, metric, flags, k, if (is.null(nn)) NULL else nn$idx,
                           rows, as.numeric(n_triplets), as.numeric(n_pairs), seed, n_threads,
                           FALSE, simd_option())
  if (flags[1]) out$neighbor_preservation <- res$neighbor_preservation
  if (flags[2]) {
    norm <- 2 / (length(rows) * k * (2 * n - 3 * k - 1))
    out$trustworthiness <- 1 - norm * sum(res$trust_penalty)
    out$continuity <- 1 - norm * sum(res$cont_penalty)
  }
  if (flags[3]) out$random_triplet_accuracy <- res$triplet_accuracy
  if (flags[4]) {
    if (is.na(res$distance_correlation)) {
      warning("the distances are all equal in 'X' or in 'Y' over the pairs used: ",
              "their rank correlation is undefined (NA)", call. = FALSE)
      res$distance_correlation <- NA_real_
    }
    out$distance_correlation <- res$distance_correlation
  }
  out
}
