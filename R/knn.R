#' Extended k-nearest neighbour graph
#'
#' Finds, for every row of `X`, the row itself and its
#' `min(n_neighbors + n_extra, n - 1)` nearest other rows: the "extended"
#' neighbourhood from which [enn_to_lsnn()] picks locally scaled neighbours.
#'
#' **Counting neighbours.** Here `n_neighbors` counts the other rows, not the
#' row itself: the graph has `n_neighbors + n_extra + 1` columns, so
#' `extended_knn(X, n_neighbors = 15, n_extra = 10)` has 26. (The functions
#' of local scaling, [locally_scaled_knn()] and [enn_to_lsnn()], count the
#' row itself, as uwot does; both conventions come from the method's
#' original code.)
#'
#' With `nn_kind = "exact"` every pair of rows is compared. The candidate
#' search runs on single-precision matrix products (AVX2 and FMA where the
#' CPU has them, see [simd_kernels()]), but the result is exact: the kept
#' distances are recomputed in double precision from `X` as given, and each
#' row is checked against a bound on the single-precision rounding error;
#' a row the check cannot certify is scored again against every other row,
#' and all the rows within the error bound are compared in double precision. Memory stays
#' proportional to `n * k` plus a copy of
#' the data (in single precision when `X` holds values that single precision
#' represents exactly, such as pixel intensities or counts); no `n x n` matrix
#' is ever formed. Time grows as `n^2`.
#'
#' With `nn_kind = "approx"` (the default), lsnn's own approximate search
#' runs: initial neighbours from a forest of random-projection trees whose
#' leaves are searched exhaustively, then nearest-neighbour descent, rounds of
#' "local joins" in which the neighbours of each row are compared with each
#' other (Dong et al., 2011), until the recall estimated on a random sample of
#' rows reaches 0.99 (see [approx_control()] for the settings, passed through
#' `nn_args`, and for the stopping rules). Candidates are ranked on
#' single-precision distances with the exact search's vector kernels, but
#' every distance returned is recomputed in double precision from `X` as
#' given, so both kinds report the same distance for the same pair. The
#' search is random: it draws its seed from R's generator, so [set.seed()]
#' makes it reproducible, with the same result for every `n_threads`. On
#' Fashion-MNIST (70,000 rows) at `k = 67` it takes a fraction of the exact
#' search's time (`bench/bench-approx.R`); on small data the exact search is
#' as fast, and it is run instead when there are few rows (at most twice the
#' tree leaf size) or when `k` is above a quarter of the rows.
#'
#' With `nn_kind = "partition"` the result is the exact graph, identical to
#' `nn_kind = "exact"`'s (ties included, for any `n_threads`), found with
#' fewer comparisons when the data is clustered. The rows are split by a
#' seeded k-means into partitions of about 1,024 rows (see
#' [partition_control()], passed through `nn_args`); every partition is
#' searched against itself in the exact search's matrix-product tiles, then
#' each block of rows against the other partitions, nearest first. A
#' partition is skipped for a row when the triangle inequality proves that
#' none of its rows can be among the row's neighbours: the row's distance to
#' the partition's centre, less the partition's radius, exceeds the row's
#' current `k`-th distance (with margins for rounding). The candidates are
#' then proved, or searched again, as the exact search does.
#'
#' **When each kind wins** (2 threads, `bench/README.md`). On data of tens
#' of columns, `"partition"` is the fastest of the three and exact: on
#' clustered rows it compares a tenth of the pairs (100,000 or 1e6 rows of
#' 50 columns in 30 clusters: under half the approximate search's time, a
#' third at 1e6), and on rows without clusters (uniform, say), where nothing
#' can be skipped, it takes about the exact search's time, which at 100,000
#' rows of 50 columns is still below the approximate search's. There the
#' exact search's `n^2` time is what limits it: for unclustered data of a
#' million rows, use `"approx"`. On wide data (hundreds of columns, such as
#' images) the bound skips little, and `"approx"` is several times faster at
#' a recall near 0.995.
#'
#' `"partition"` serves dense data under the metrics
#' `"euclidean"` and `"cosine"`; for the other metrics, for sparse data,
#' for cosine data with a zero row, for data beyond 2^250 or below 2^-250 in
#' magnitude and for fewer than about 1,500 rows (1.5 partitions) it runs the
#' exact search, with the same result (`verbose = TRUE` says so, and how
#' many pairs were compared and rows proved). Its random numbers (the
#' k-means sample) are drawn from R's generator, like the approximate
#' search's; they change its time, never its result.
#'
#' **Which search runs.** The functions that find neighbours themselves,
#' [neighbor_embedding()] and [umap_affinities()] given `X`, run the exact
#' search up to 20,000 rows. Above, for dense data of at most 100 columns
#' under `"euclidean"` or `"cosine"`, they first forecast the partitioned search's work: the data
#' is partitioned as `"partition"` does it, and a few rows of each partition
#' stand for its rows' reach (a fixed seed: the forecast draws nothing from
#' R's generator). They run `"partition"` when its forecast share of the
#' exact search's products times `n` times the columns is at most 1.5e7 and
#' either that share is at most a quarter or the data's intrinsic dimension
#' is 20 or more (estimated from 64 rows' 20 nearest neighbours, by Levina
#' and Bickel's estimate; the descent converges slowly on such data), and
#' `"approx"` otherwise (limits from `bench/bench-partition.R`): clustered
#' data get the exact graph, faster (PaCMAP's graph of 1e6 rows in 50
#' columns, 30 clusters: a third of the approximate search's time), and so do
#' data of up to a few hundred thousand rows of high intrinsic dimension;
#' lower-dimensional data without clusters, wider data such as images, and
#' data far beyond a million rows get the approximate one.
#'
#' **PCA first.** With `pca = k` the search runs on the rows' first `k`
#' principal components instead of the rows (as `uwot::umap(pca = )` does):
#' faster on wide data, and the distances returned are those between the
#' reduced rows. The components are computed exactly (the top eigenvectors
#' of the covariance, in lsnn's core) for dense data of at most 1,024
#' columns, by irlba's truncated SVD otherwise (sparse data stays sparse:
#' irlba centres it implicitly). `pca_center = FALSE` leaves the columns
#' uncentred (the truncated SVD of the rows as they are, which keeps their
#' dot products best). A rotation keeps euclidean distances and dot products
#' within the components, so `pca` is for the metrics `"euclidean"` and
#' `"cosine"`; with `"cosine"`, the angles are those of the reduced rows,
#' of the centred rows unless `pca_center = FALSE`. An index
#' (`ret_index = TRUE`) keeps the reduced rows and the centre and rotation,
#' and the queries project their rows through them.
#'
#' **Graphs from other packages.** Every lsnn function that takes a graph
#' reads `list(idx, dist)` (from lsnn, uwot, rnndescent or RcppHNSW), uwot's
#' `ret_nn = TRUE` output holding one metric, BiocNeighbors'
#' `list(index, distance)` (the row itself, which BiocNeighbors leaves out,
#' is put in front at distance 0 when no row lists itself), Seurat's
#' `Neighbor` object (see [as_seurat_neighbor()]), and the sparse
#' distance matrix `uwot::umap(nn_method = )` takes (n x n, column j holding
#' the distances from j to its neighbours, the same number in every column;
#' the diagonal is ignored).
#'
#' A graph that lists a neighbour twice in a row is refused, with the row
#' named: no search these forms come from lists one twice, and a repeated
#' neighbour would count twice in every affinity and local scale. The one
#' form that can hold a repeat without a defect in the search is a triplet
#' sparse matrix (`dgTMatrix`) that stores a pair twice, as the union of two
#' searches' pairs does; the Matrix package would add the two distances, so
#' lsnn keeps the pair once, at its smaller distance, with a warning.
#'
#' Rows at equal reported distances are listed by row number, and the row
#' itself is in column 1 even when it has exact duplicates. Results
#' are identical for every `n_threads`.
#'
#' **Binary data.** With `metric = "hamming"`, `X` is a logical matrix or a
#' numeric matrix holding only 0 and 1 (anything else, NA included, is an
#' error naming the first offending row and column). The distance is the
#' fraction of columns in which two rows differ (the number of differing
#' columns divided by `ncol(X)`), as rnndescent, pynndescent and SciPy report
#' it (uwot's Annoy search reports the number itself: multiply by `ncol(X)`
#' to compare; UMAP's and t-SNE's affinities, calibrated on each point's own
#' distances, do not depend on that scale). The rows are packed 64 columns to a 64-bit word and compared by
#' counting the bits in which they differ (the CPU's popcount instruction in
#' the AVX2 build). These counts are exact, so the exact search ranks every
#' pair exactly, and its result equals brute force's, ties included (by the
#' smaller row number), with no second pass.
#'
#' @param X The data: a numeric matrix, a data frame (its numeric columns are
#'   used; a message names any other columns dropped) or a sparse matrix of
#'   the Matrix package (`dgCMatrix`, `dgRMatrix`, `dgTMatrix` ...; metrics
#'   "euclidean" and "cosine"), one row per
#'   observation; for `metric = "hamming"` a logical matrix or a numeric
#'   matrix of 0 and 1, or a logical sparse Matrix (read as a dense logical
#'   matrix; see Binary data). Logical data of any form is refused for the
#'   other metrics. No missing or infinite values. Sparse data with at least
#'   0.5% non-zero entries (approximate search) or 5% (exact search) is
#'   searched on a dense copy, which is faster, when that copy takes at most
#'   `getOption("lsnn.max_dense_bytes", 4e9)` bytes; set the option to 0 to
#'   keep the sparse path. `verbose = TRUE` says which path runs.
#' @param n_neighbors,n_extra Together the number of neighbours wanted besides
#'   the row itself, `n_neighbors + n_extra`, capped at `n - 1` (so any
#'   larger whole number gives every row all the others).
#' @param n_threads Number of threads (0 and 1 both run on the calling thread);
#'   capped at what the machine can run (`RcppParallel::defaultNumThreads()`).
#'   `NULL` (the default) for [default_n_threads()]: every core R may use.
#'   The result is the same for any number of threads.
#' @param nn_kind `"exact"`, `"approx"` or `"partition"` (the exact graph
#'   through a partition of the rows, for clustered data; see
#'   [extended_knn()]).
#' @param verbose If `TRUE`, show the search's progress (a cli progress bar
#'   for each phase of a long search) and one summary line per phase.
#' @param metric `"euclidean"` (default), `"cosine"` (1 minus the cosine
#'   similarity; a zero row is at distance 1 from non-zero rows and 0 from
#'   other zero rows), `"correlation"` (1 minus Pearson's correlation of the
#'   two rows), `"manhattan"` or `"hamming"` (the fraction of columns that
#'   differ, for logical or 0/1 data; see Binary data).
#' @param nn_args Settings of the approximate search (`nn_kind = "approx"`):
#'   the result of [approx_control()], or a list of some of its arguments;
#'   with `nn_kind = "partition"`, the result of [partition_control()] or a
#'   list of its arguments (the default, `approx_control()`, then stands for
#'   `partition_control()`). Ignored by the exact search.
#' @param ret_index If `TRUE`, also return an index of the data for
#'   [extended_knn_query()] and [locally_scaled_knn_query()].
#' @param scale_from,scale_to With `ret_index = TRUE`: the columns of the
#'   graph whose mean distance is each row's local scale, stored in the index
#'   for [locally_scaled_knn_query()] (see [locally_scaled_knn()]).
#' @param pca `NULL` or 0 to search the rows as they are, or a whole number
#'   below `ncol(X)`: the rows are first reduced to that many principal
#'   components, and the neighbours are those of the reduced rows (see "PCA
#'   first" in [extended_knn()]). Metrics `"euclidean"` and `"cosine"` only.
#' @param pca_center If `TRUE`, the columns are centred before the PCA; if
#'   `FALSE`, the rows are reduced as they are (a truncated SVD).
#' @param seed `NULL` (the default) to draw random numbers from R's generator, so
#'   that [set.seed()] makes the result reproducible; or a whole number: the
#'   result then depends on it alone, and R's generator is left as it was.
#' @return A graph: `list(idx, dist)`, two `n x k` matrices with
#'   `k = min(n_neighbors + n_extra, n - 1) + 1`. `idx` is an integer matrix
#'   of 1-based row numbers with the row itself in column 1; `dist` holds the
#'   distances, 0 in column 1 and increasing along each row. This is the
#'   format `uwot::umap(nn_method = )` takes.
#'
#'   With `ret_index = TRUE`, a list with elements `enn`, that graph, and
#'   `index`, an object of class `lsnn_index`: a plain list that [saveRDS()]
#'   stores and [readRDS()] restores, giving the same query results. It
#'   holds `data`, the data (a double matrix, a `dgCMatrix` for sparse
#'   data, or for `metric = "hamming"` the 0/1 matrix as given; with `pca`,
#'   the reduced rows); `metric`; `graph`, the graph above; `sigma`, each row's local
#'   scale (`NULL` when the graph has fewer than `scale_to` columns);
#'   `scale_from` and `scale_to`; `search`, the settings of the approximate
#'   query; `format_version`; and with `pca`, `pca`: `list(center,
#'   rotation)`, the column means (`NULL` with `pca_center = FALSE`) and the
#'   `ncol(X) x pca` matrix of principal axes. The functions that take an index check it
#'   whole (every element, its type and dimensions, and that they agree) and
#'   refuse a damaged one with an error naming the element.
#' @references
#' Dong, W., Moses, C. and Li, K. (2011). Efficient k-nearest neighbor graph
#' construction for generic similarity measures. \emph{Proceedings of the
#' 20th International Conference on World Wide Web}, 577-586.
#' @seealso [locally_scaled_knn()], [enn_to_lsnn()], [truncate_graph()],
#'   [approx_control()], [partition_control()].
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' enn <- extended_knn(X, n_neighbors = 15, n_extra = 10, nn_kind = "exact")
#' dim(enn$idx)
#' enn$idx[1:3, 1:5]
#' res <- extended_knn(X, n_neighbors = 15, n_extra = 10, nn_kind = "exact",
#'                     ret_index = TRUE)
#' res$index
#' set.seed(1)
#' approx <- extended_knn(X, n_neighbors = 15, n_extra = 10)
#' neighbor_overlap(approx, enn)
#' @export
extended_knn <- function(X, n_neighbors = 150, n_extra = 50, n_threads = NULL,
                         nn_kind = "approx", verbose = FALSE, metric = "euclidean",
                         nn_args = approx_control(), ret_index = FALSE, scale_from = 5,
                         scale_to = 7, pca = NULL, pca_center = TRUE, seed = NULL) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
  ret_index <- check_flag(ret_index, "ret_index")
  if (ret_index) scale <- check_scale_columns(scale_from, scale_to, big_int)
  # both are capped at n - 1 below, so any larger whole number is taken
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1, clamp = TRUE)
  n_extra <- check_whole(n_extra, "n_extra", min = 0, clamp = TRUE)
  n_threads <- check_n_threads(n_threads)
  nn_kind <- check_choice(nn_kind, "nn_kind", nn_kinds)
  verbose <- check_flag(verbose, "verbose")
  metric <- check_choice(metric, "metric", knn_metrics)
  if (nn_kind == "approx") nn_args <- check_approx_control(nn_args)
  if (nn_kind == "partition") nn_args <- check_partition_control(nn_args)
  pca <- check_pca(pca)
  pca_center <- check_flag(pca_center, "pca_center")
  data <- prepare_data(X, metric)
  reduced <- reduce_by_pca(data, pca, pca_center, metric, n_threads, verbose, "extended_knn")
  data <- reduced$data
  # (in double: the sum of two clamped counts overflows an integer)
  k <- as.integer(min(as.double(n_neighbors) + n_extra, data$n - 1) + 1)
  # (the index keeps the rows as the search read them, dense or sparse, so
  # that a query computes the same distances)
  data <- dense_if_faster(data, nn_kind, verbose)
  seed <- if (nn_kind != "exact") draw_seed()
  graph <- search_knn(data, k, metric, nn_kind, n_threads, verbose, nn_args, seed)
  if (!ret_index) return(graph)
  list(enn = graph, index = new_index(data, metric, graph, scale[1], scale[2], n_threads,
                                      reduced$pca))
}

# The n_cols-column kNN graph (the row itself included) of prepared data
# (see prepare_data()), by the search nn_kind; the approximate one from `seed`
# (of draw_seed()'s form).
search_knn <- function(data, n_cols, metric, nn_kind, n_threads, verbose,
                       nn_args = approx_control(), seed = NULL) {
  data <- dense_if_faster(data, nn_kind, verbose)
  if (nn_kind == "exact") {
    exact_knn(data, n_cols, metric, n_threads, verbose)
  } else if (nn_kind == "partition") {
    partition_knn(data, n_cols, metric, n_threads, verbose, check_partition_control(nn_args), seed)
  } else {
    approx_knn(data, n_cols, metric, n_threads, verbose, nn_args, seed)
  }
}

# Sparse data dense enough that the dense kernels beat the sparse ones runs
# on a dense copy, when that copy fits in getOption("lsnn.max_dense_bytes").
# The break-even densities are those measured by bench/bench-sparse.R
# (bench/README.md, "How the defaults were chosen": "Sparse input").
dense_if_faster <- function(data, nn_kind, verbose) {
  if (data$kind != "sparse") return(data)
  density <- length(data$rows@x) / (as.double(data$n) * data$d)
  threshold <- if (nn_kind == "approx") 0.005 else 0.05
  dense_bytes <- 8 * as.double(data$n) * data$d
  budget <- number_option("lsnn.max_dense_bytes", 4e9, help = "extended_knn")
  if (density < threshold || dense_bytes > budget) {
    if (verbose) {
      message(sprintf("sparse data (%.1f%% non-zero): sparse %s search", 100 * density, nn_kind))
    }
    return(data)
  }
  if (verbose) {
    message(sprintf("sparse data (%.1f%% non-zero): %s search on a dense copy (%.0f MB)",
                    100 * density, nn_kind, dense_bytes / 2^20))
  }
  list(kind = "dense", x = dense_data(data), n = data$n, d = data$d)
}

# The exact search on prepared data (see prepare_data()).
exact_knn <- function(data, k, metric, n_threads, verbose, block_rows = 0L) {
  graph <- .exact_knn(data, k, metric, n_threads, verbose, simd_option(), block_rows)
  attr(graph, "lsnn_refined_rows") <- NULL
  graph
}

# The approximate search on prepared data, from a seed of draw_seed()'s form
# (drawn by the function the user called). A search whose last recall
# estimate misses more than twice the neighbours its target allows warns
# (short_recall_warning()), unless `warn` is FALSE (the sharded search
# estimates its own recall).
approx_knn <- function(data, k, metric, n_threads, verbose, control, seed, warn = TRUE) {
  # Every tree lists every row: beyond 2^31 entries (8 GB of row numbers
  # and more for the nodes) the forest cannot be held.
  if (!is.null(control$n_trees) && as.double(control$n_trees) * data$n > big_int) {
    stop_arg("'n_trees' (", control$n_trees, ") is too many for ", data$n, " rows: the ",
             "forest would hold ", format(as.double(control$n_trees) * data$n, big.mark = ","),
             " row entries (at most 2^31 - 1); use fewer trees (default 10 or 20)")
  }
  ctl <- lapply(control, function(v) if (is.null(v)) NA_integer_ else v)
  graph <- .approx_knn(data, k, metric, ctl, seed, n_threads, verbose, simd_option())
  recall <- attr(graph, "lsnn_estimated_recall")
  attr(graph, "lsnn_estimated_recall") <- NULL
  if (warn && !is.null(recall) && 1 - recall > 2 * (1 - control$target_recall)) {
    short_recall_warning(recall, control$target_recall)
  }
  graph
}

# On data of high intrinsic dimension the descent stops (too few changes, or
# its last iteration) well short of its target; the graph is then not what
# target_recall asked for, and the user is told so, with the ways out.
short_recall_warning <- function(recall, target) {
  warning(sprintf(paste0(
    "the approximate search stopped at an estimated recall of %.3f, short of ",
    "target_recall = %s (data of high intrinsic dimension slow its descent): ",
    "nn_kind = \"partition\" or \"exact\" gives the exact graph; more n_iters or ",
    "max_candidates in approx_control() raise the recall"), recall, format(target)),
    call. = FALSE)
}

#' Settings of the approximate nearest-neighbour search
#'
#' Tuning parameters of lsnn's approximate search (`nn_kind = "approx"` in
#' [extended_knn()] and [locally_scaled_knn()]), passed as their `nn_args`
#' argument. `NULL` chooses a value from the number of rows `n` and the
#' number of neighbours `k` (the row itself included).
#'
#' The search first builds `n_trees` random-projection trees, splitting the
#' rows by the hyperplane half-way between two random rows until at most
#' `leaf_size` remain, and compares all the rows of each leaf with one
#' another. (Data of more than 64 columns is split on the rows' leading
#' principal coordinates, 32 of them up to 128 columns and 64 beyond, found
#' from a sample of rows: the trees read a fraction of the data and their
#' leaves are as good.) Then nearest-neighbour descent refines the lists: each iteration
#' samples, for every row, up to `max_candidates` neighbours and reverse
#' neighbours that are new since they were last used and as many older
#' ones, compares the new ones with all of them, and updates the lists.
#'
#' The descent stops after `n_iters` iterations; earlier when an iteration
#' changes fewer than `delta * n * (k - 1)` list entries; and earlier still
#' when the estimated recall reaches `target_recall`. The estimate comes from
#' 128 rows drawn at random (64 for sparse data) whose true `k - 1`-th
#' neighbour distance is found by brute force at the start (about `128 / n`
#' of the exact search's work): it is the fraction of their listed
#' neighbours that lie no farther than that distance.
#'
#' More trees, larger leaves, more candidates and more iterations raise the
#' recall and the time; on data of high intrinsic dimension (say, many
#' independent Gaussian columns) the recall stays lower, and a search whose
#' last estimate misses more than twice the neighbours that `target_recall`
#' allows (below 0.98 for 0.99) warns, naming the estimate. The defaults reach a
#' recall of about 0.99 on image data; how they were chosen is told in
#' `bench/README.md` in the package's source.
#'
#' @param n_trees Number of random-projection trees (default 10 for data
#'   of at most 128 columns, 20 otherwise).
#' @param leaf_size Largest number of rows in a leaf (default
#'   `max(512, 3 * k)` for data of at most 128 columns, `max(256, 3 * k)`
#'   otherwise).
#' @param max_candidates Number of new (and of old) candidates per row and
#'   iteration (default `max(min(k - 1, 40), ceiling((k - 1) / 3))`).
#' @param n_iters Largest number of descent iterations (default
#'   `max(5, ceiling(log2(n)))`); 0 keeps the forest's lists.
#' @param delta Stop when an iteration changes fewer than this fraction of
#'   the list entries (default 0.001).
#' @param target_recall Stop once the estimated recall reaches this value
#'   (default 0.99); 1 turns the estimate off.
#' @return A list of class `lsnn_approx_control` with the six settings
#'   (`NULL` for automatic).
#' @seealso [extended_knn()]
#' @examples
#' approx_control()
#' X <- as.matrix(iris[, 1:4])
#' set.seed(1)
#' g <- extended_knn(X, 10, 5, nn_args = approx_control(n_trees = 4))
#' @export
approx_control <- function(n_trees = NULL, leaf_size = NULL, max_candidates = NULL,
                           n_iters = NULL, delta = 0.001, target_recall = 0.99) {
  big <- .Machine$integer.max
  check_opt <- function(x, name, min) {
    if (is.null(x)) NULL else check_whole(x, name, min = min, max = big)
  }
  check_fraction <- function(x, name) check_number(x, name, min = 0, max = 1)
  out <- list(
    n_trees = check_opt(n_trees, "n_trees", 1),
    leaf_size = check_opt(leaf_size, "leaf_size", 2),
    max_candidates = check_opt(max_candidates, "max_candidates", 1),
    n_iters = check_opt(n_iters, "n_iters", 0),
    delta = check_fraction(delta, "delta"),
    target_recall = check_fraction(target_recall, "target_recall")
  )
  structure(out, class = "lsnn_approx_control")
}

#' @method print lsnn_approx_control
#' @export
print.lsnn_approx_control <- function(x, ...) {
  shown <- vapply(x, function(v) if (is.null(v)) "automatic" else format(v), character(1))
  cat("lsnn approximate search settings:\n")
  cat(paste0("  ", format(names(shown)), " ", shown, collapse = "\n"), "\n")
  invisible(x)
}

# nn_args as given to extended_knn(): the output of approx_control() or a
# list of its arguments.
check_approx_control <- function(nn_args) {
  if (inherits(nn_args, "lsnn_approx_control")) return(nn_args)
  if (is.null(nn_args)) return(approx_control())
  if (!is.list(nn_args) || (length(nn_args) > 0 && is.null(names(nn_args))) ||
      any(names(nn_args) == "")) {
    stop_arg("'nn_args' must be the result of approx_control() or a named list of its arguments")
  }
  known <- names(formals(approx_control))
  unknown <- setdiff(names(nn_args), known)
  if (length(unknown) > 0) {
    stop_arg("'nn_args' has unknown settings: ", paste(unknown, collapse = ", "),
             " (known: ", paste(known, collapse = ", "), ")")
  }
  do.call(approx_control, nn_args)
}
