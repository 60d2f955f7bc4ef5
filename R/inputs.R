# The inputs of the functions that take data, a neighbour graph, distances
# or affinities, read and checked once: the data in the form C++ takes, the
# points of `X` or `nn_method` (resolve_inputs()), and the coordinates and
# affinities of an embedding. The graph forms are read in R/graph_read.R.

# ---- data ----

# The data a neighbour search runs on, checked once: a numeric matrix, the
# numeric columns of a data frame, or a Matrix (sparse classes such as
# dgCMatrix, dgTMatrix or dgRMatrix are converted to a dgRMatrix, dense ones to
# a matrix). Returns list(kind = "dense", x = double matrix, n, d) or
# list(kind = "sparse", rows = dgRMatrix, n, d), or for metric = "hamming"
# list(kind = "binary", x = logical, integer or double matrix of 0 and 1, n,
# d), kept as given: the one form in which data crosses into C++
# (lsnn_r::row_data() in src/r_inputs.h reads each).
prepare_data <- function(X, metric, caller = "X", min_rows = 2) {
  if (metric == "hamming") return(prepare_binary_data(X, caller, min_rows))
  if (is.data.frame(X)) {
    numeric_cols <- vapply(X, is.numeric, logical(1))
    if (!any(numeric_cols)) stop_arg("'", caller, "' has no numeric columns")
    if (!all(numeric_cols)) {
      message("using the ", sum(numeric_cols), " numeric columns of '", caller, "'; dropped: ",
              paste(names(X)[!numeric_cols], collapse = ", "))
    }
    X <- as.matrix(X[, numeric_cols, drop = FALSE])
  }
  if (inherits(X, "dist")) {
    stop_arg("'", caller, "' is a dist object: give the data themselves, one row per point ",
             "(of the functions taking data, neighbor_embedding() alone takes distances)")
  }
  if (inherits(X, "Matrix")) {
    # (as a dense logical matrix is: TRUE and FALSE are not coordinates)
    if (methods::is(X, "lMatrix")) {
      stop_arg("'", caller, "' is a logical ", class(X)[1], ": metric = \"hamming\" reads ",
               "logical data; for metric = \"", metric, "\" give numbers (as(", caller,
               ", \"dMatrix\") converts it)")
    }
    X <- read_matrix_class(X, caller)
  }
  if (inherits(X, "dgRMatrix")) {
    if (nrow(X) < min_rows) stop_arg("'", caller, "' must have at least ", rows_text(min_rows))
    if (ncol(X) < 1) stop_arg("'", caller, "' must have at least 1 column")
    if (!all_finite(X@x)) stop_arg("'", caller, "' contains NA, NaN or infinite values")
    if (!metric %in% c("euclidean", "cosine")) {
      stop_arg("sparse data supports metric = \"euclidean\" or \"cosine\"; ",
               "use as.matrix() for metric = \"", metric, "\"")
    }
    return(list(kind = "sparse", rows = X, n = nrow(X), d = ncol(X)))
  }
  if (is_graph_like(X)) {
    stop_arg("'", caller, "' is a neighbour graph (a list with 'idx' and 'dist'), not data")
  }
  if (!is.matrix(X)) {
    stop_arg("'", caller, "' must be a numeric matrix, a data frame or a sparse Matrix, ",
             "with one row per observation")
  }
  if (is.logical(X)) {
    stop_arg("'", caller, "' is logical: metric = \"hamming\" reads logical data; for metric = \"",
             metric, "\" give numbers")
  }
  if (!is.numeric(X)) stop_arg("'", caller, "' must be numeric (it is ", typeof(X), ")")
  if (nrow(X) < min_rows) stop_arg("'", caller, "' must have at least ", rows_text(min_rows))
  if (ncol(X) < 1) stop_arg("'", caller, "' must have at least 1 column")
  # min() and max() are NA or infinite exactly when some value is; unlike
  # is.finite(X) or range(X), they allocate nothing. Details only on failure.
  if (!all_finite(X)) {
    bad <- !is.finite(X)
    stop_arg("'", caller, "' contains ", sum(bad), " NA, NaN or infinite values (first in row ",
             which(rowSums(bad) > 0)[1], ")")
  }
  # (an unconditional storage.mode<- would copy the caller's matrix)
  if (!is.double(X)) storage.mode(X) <- "double"
  list(kind = "dense", x = X, n = nrow(X), d = ncol(X))
}

rows_text <- function(n) paste(n, if (n == 1) "row" else "rows")

# The data of metric = "hamming": a logical matrix, or a numeric one holding
# only 0 and 1 (its logical and numeric columns for a data frame, a dense
# Matrix as a matrix), kept in its own type (the core packs it into bits).
# NA is refused like any other value that is neither 0 nor 1.
prepare_binary_data <- function(X, caller, min_rows) {
  what <- "a logical matrix or a numeric matrix of 0 and 1 for metric = \"hamming\""
  if (is.data.frame(X)) {
    usable <- vapply(X, function(col) is.numeric(col) || is.logical(col), logical(1))
    if (!any(usable)) stop_arg("'", caller, "' has no logical or numeric columns")
    if (!all(usable)) {
      message("using the ", sum(usable), " logical and numeric columns of '", caller,
              "'; dropped: ", paste(names(X)[!usable], collapse = ", "))
    }
    X <- as.matrix(X[, usable, drop = FALSE])
  }
  if (inherits(X, "Matrix")) {
    # a logical (or pattern) sparse Matrix is binary data, read as the dense
    # logical matrix the core packs into bits
    binary <- methods::is(X, "lMatrix") || methods::is(X, "nMatrix")
    if (methods::is(X, "sparseMatrix") && !binary) {
      stop_arg("sparse data supports metric = \"euclidean\" or \"cosine\"; ",
               "use as.matrix() for metric = \"hamming\"")
    }
    X <- if (binary) as.matrix(X) else read_matrix_class(X, caller)
  }
  if (is_graph_like(X)) {
    stop_arg("'", caller, "' is a neighbour graph (a list with 'idx' and 'dist'), not data")
  }
  if (!is.matrix(X) || !(is.logical(X) || is.numeric(X))) {
    stop_arg("'", caller, "' must be ", what,
             if (is.matrix(X)) paste0(" (it is a ", typeof(X), " matrix)"))
  }
  if (nrow(X) < min_rows) stop_arg("'", caller, "' must have at least ", rows_text(min_rows))
  if (ncol(X) < 1) stop_arg("'", caller, "' must have at least 1 column")
  bad <- .first_non_binary(X)
  if (bad[1] > 0) {
    value <- X[bad[1], bad[2]]
    stop_arg("'", caller, "' must be ", what, ": row ", bad[1], ", column ", bad[2], " holds ",
             if (is.nan(value)) "NaN" else if (is.na(value)) "NA" else show_value(value))
  }
  list(kind = "binary", x = X, n = nrow(X), d = ncol(X))
}

# A Matrix-package object as lsnn reads data: a sparse one as a general
# double dgRMatrix (its slots list the rows, as the core reads them), a dense
# one as a base matrix.
read_matrix_class <- function(X, caller) {
  out <- tryCatch(
    if (methods::is(X, "sparseMatrix")) as_general_sparse(X, "RsparseMatrix") else as.matrix(X),
    error = function(e) NULL)
  if (is.null(out)) {
    stop_arg("'", caller, "' is a ", class(X)[1], " that lsnn cannot read as numbers; give a ",
             "numeric matrix, a data frame or a numeric sparse Matrix")
  }
  out
}

# Any Matrix as a general double sparse matrix of the given kind
# ("CsparseMatrix" for a dgCMatrix, "RsparseMatrix" for a dgRMatrix).
as_general_sparse <- function(X, kind) {
  methods::as(methods::as(methods::as(X, "dMatrix"), "generalMatrix"), kind)
}

dense_or_rows <- function(data) if (data$kind == "sparse") data$rows else data$x

# The prepared data as a dense double matrix (for the all-pairs affinities
# and the embedding's PCA start).
dense_data <- function(data) {
  if (data$kind == "sparse") return(as.matrix(data$rows))
  X <- data$x
  if (!is.double(X)) storage.mode(X) <- "double"
  X
}

# ---- X or nn_method ----

# The points of a function that takes data `X`, a neighbour graph
# `nn_method`, or (with both = TRUE) both, each read and checked once here:
# `data` from prepare_data() (in the geometry of `metric`) or NULL, `graph`
# from check_graph() or NULL, and `n`, the number of points. Every function
# with these arguments starts here; when it needs a graph that was not given,
# graph_of_inputs() finds one. `graph_arg` is the graph's argument as the
# caller names it (the quality measures: `nn`, or `X` itself).
# With embedding = TRUE (neighbor_embedding()) `X` may also be a dist object
# (`distances`, from read_distances(); no data) and the affinities may be
# given as `P` (`P`, from read_affinities(); with or without the data).
resolve_inputs <- function(X, nn_method, caller, both = TRUE, metric = "euclidean",
                           graph_arg = "nn_method", P = NULL, embedding = FALSE,
                           n_threads = 1L) {
  if (!is.null(X) && is_graph_like(X)) {
    stop_arg("'X' is a neighbour graph: pass it as '", graph_arg, "' (", caller,
             "(", graph_arg, " = graph)", if (both) ", X = NULL or the data", ")")
  }
  if (!both && !is.null(X) && !is.null(nn_method)) {
    stop_arg("give the data as 'X' or a neighbour graph as '", graph_arg, "', not both")
  }
  if (!is.null(P) && !is.null(nn_method)) {
    stop_arg("give the affinities as 'P' or a neighbour graph as '", graph_arg, "', not both")
  }
  if (embedding && inherits(X, "dist")) {
    if (!is.null(nn_method)) {
      stop_arg("give the distances as 'X' or a neighbour graph as '", graph_arg, "', not both")
    }
    if (!is.null(P)) stop_arg("give the distances as 'X' or the affinities as 'P', not both")
    distances <- read_distances(X, "X")
    return(list(data = NULL, graph = NULL, distances = distances, P = NULL, n = distances$n,
                row_names = distances$labels))
  }
  if (is.null(X) && is.null(nn_method) && is.null(P)) {
    stop_arg("give the data as 'X'", if (embedding) " (or their distances, a dist object)",
             if (embedding) ", " else " or ", "a neighbour graph as '", graph_arg, "'",
             if (embedding) " or the affinities as 'P'")
  }
  if (is.matrix(X) && is.logical(X) && metric != "hamming") {
    stop_arg("'X' is logical: ", caller, "() measures euclidean distances between rows of ",
             "numbers; for hamming distances give the graph of extended_knn(X, metric = ",
             "\"hamming\") or locally_scaled_knn(X, metric = \"hamming\") as '", graph_arg, "'")
  }
  data <- if (!is.null(X)) prepare_data(X, metric, "X")
  row_names <- if (is.null(data)) NULL else rownames(dense_or_rows(data))
  if (!is.null(P)) {
    affinities <- read_affinities(P, "P", if (!is.null(data)) data$n, "'X' has", n_threads)
    if (is.null(data)) row_names <- rownames(affinities$P)
    return(list(data = data, graph = NULL, distances = NULL, P = affinities,
                n = nrow(affinities$P), row_names = row_names))
  }
  graph <- NULL
  if (!is.null(nn_method)) {
    if (!is_graph_like(nn_method) && !is_sparse_graph(nn_method)) {
      stop_arg("'", graph_arg, "' must be a neighbour graph: ", graph_forms)
    }
    graph <- check_graph(nn_method, graph_arg, min_cols = 2)
    if (!is.null(data) && nrow(graph$idx) != data$n) {
      stop_arg("'", graph_arg, "' has ", nrow(graph$idx), " rows but 'X' has ", data$n)
    }
  }
  list(data = data, graph = graph, distances = NULL, P = NULL,
       n = if (is.null(graph)) data$n else nrow(graph$idx), row_names = row_names)
}

# A dist object (stats::dist(), as.dist()) checked: its size, the count of
# its distances, which must be finite and non-negative. Returns list(d, n,
# labels): the distances as a double vector in dist's order (the pairs
# i > j, column by column), the number of points and their labels.
read_distances <- function(D, name) {
  n <- attr(D, "Size")
  damaged <- function(...) stop_arg("'", name, "' is a damaged dist object: ", ...)
  if (!is.numeric(n) || length(n) != 1 || !is.finite(n) || n != round(n) || n < 1) {
    damaged("its attribute Size must be the number of points")
  }
  if (!is.numeric(D)) damaged("its distances must be numbers (they are ", typeof(D), ")")
  if (length(D) != n * (n - 1) / 2) {
    damaged(n, " points need n (n - 1) / 2 = ", format(n * (n - 1) / 2, big.mark = ","),
            " distances (it holds ", length(D), ")")
  }
  d <- as.double(D)
  labels <- attr(D, "Labels")
  if (!is.null(labels) && length(labels) != n) labels <- NULL
  bad <- if (!all_finite(d)) which(!is.finite(d))[1] else if (length(d) && min(d) < 0) which(d < 0)[1]
  if (!is.null(bad)) {
    # the points of the bad-th distance: column j holds d(j + 1, j) ... d(n, j)
    ends <- cumsum(as.double(n - seq_len(n - 1)))
    j <- which(bad <= ends)[1]
    i <- bad - (ends[j] - (n - j)) + j
    stop_arg("'", name, "' must hold finite, non-negative distances: the distance between ",
             "points ", i, " and ", j, " is ", show_value(d[bad]))
  }
  list(d = d, n = as.integer(n), labels = labels)
}

# The graph of resolve_inputs()'s points: nn_method as given, or else the
# n_cols nearest neighbours of each row of X (itself included, as every count
# of graph columns inside lsnn is), from the search search_kind() picks, or
# read exactly from the distances of a dist object. The approximate search
# runs from `seed` (of draw_seed()'s form), its caller's.
graph_of_inputs <- function(inputs, n_cols, n_threads, verbose, caller, seed) {
  if (!is.null(inputs$graph)) return(inputs$graph)
  if (!is.null(inputs$distances)) {
    if (verbose) message(caller, ": ", n_cols - 1L, "-nearest neighbours from the distances")
    return(.knn_of_distances(inputs$distances$d, inputs$n, as.integer(min(n_cols, inputs$n)),
                             n_threads, verbose))
  }
  metric <- if (is.null(inputs$metric)) "euclidean" else inputs$metric
  kind <- search_kind(inputs$n, inputs$data, n_cols, metric, n_threads)
  if (verbose) message(caller, ": ", kind, " ", n_cols - 1L, "-nearest neighbours")
  search_knn(inputs$data, n_cols, metric, kind, n_threads, verbose, seed = seed)
}

# The one rule for the functions that search neighbours themselves
# (neighbor_embedding(), umap_affinities()): the exact search up to 20,000
# rows; above, the partitioned search where a forecast of its work puts it
# well below the approximate search's, else the approximate one (documented
# in ?extended_knn, "Which search runs"). `data`: prepare_data()'s, for the
# forecast (without it, the approximate search); `k`: the graph's columns.
search_kind <- function(n, data = NULL, k = NULL, metric = "euclidean", n_threads = NULL) {
  if (n <= 20000) return("exact")
  if (is.null(data) || is.null(k) || !partition_serves(data, metric)) return("approx")
  share <- partition_forecast(data, k, metric, n_threads)
  work <- share * data$n * data$d
  if (work > partition_max_work) return("approx")
  if (share <= partition_max_share ||
      intrinsic_dimension(data, metric, n_threads) >= partition_hard_dimension) {
    return("partition")
  }
  "approx"
}

# The rule's limits, from bench/bench-partition.R's runs and one-off runs
# (bench/README.md). The approximate search's time per row varies fivefold
# with the data: the descent converges slowly on data of high intrinsic
# dimension (Gaussian clusters in 50 columns, about 35) and fast on the
# principal components of images (9 to 11). So the partitioned search is
# chosen for at most 1.5e7 of share * n * d (at 1e6 rows of 50 columns and a
# share of 0.11, 5.5e6, it took a third of the approximate search's time)
# where it skips most of the products, at most a quarter of the exact
# search's (it then beat the approximate search on every set measured), or
# where the intrinsic dimension is 20 or more, whatever it skips (at a share
# of 1 it took 0.6 of the approximate search's time on 1e5 uniform rows of 50
# columns and on a Gaussian of 125,000 rows, and as long on one of 250,000
# rows, 1.25e7, where the approximate search's recall was 0.88; on
# Fashion-MNIST's 50 principal components, dimension 9.4, it lost).
partition_max_share <- 0.25
partition_max_work <- 1.5e7
partition_hard_dimension <- 20

# The intrinsic dimension of dense data, 0 for other kinds
# (intrinsic_dimension() of the core: 64 seeded rows, their 20 nearest by
# brute force).
intrinsic_dimension <- function(data, metric, n_threads = NULL) {
  .intrinsic_dimension(data, metric, 64L, 20L, c(0L, 1L),
                       if (is.null(n_threads)) default_n_threads() else n_threads, simd_option())
}

# Data the partitioned search serves and can win on: dense, euclidean or
# cosine, at most 100 columns (beyond, the bound skips little, 10 % of
# Fashion-MNIST's products, and the forecast's k-means costs a fifth of the
# approximate search), and rows few enough that even the least share seen on
# clustered data, 0.1, stays within the work limit.
partition_serves <- function(data, metric) {
  data$kind == "dense" && metric %in% c("euclidean", "cosine") && data$d <= 100 &&
    0.1 * data$n * data$d <= partition_max_work
}

# The share of the exact search's products that the partitioned search is
# forecast to compute (partition_work_share() of the core).
partition_forecast <- function(data, k, metric, n_threads = NULL) {
  control <- partition_control()
  .partition_work_share(data, as.integer(min(k, data$n)), metric, control$rows_per_partition,
                        control$n_iters, c(0L, 0L),
                        if (is.null(n_threads)) default_n_threads() else n_threads, simd_option())
}

# ---- embedding inputs ----

# Output coordinates: a numeric n x d matrix (or data frame), finite.
check_coords <- function(Y, name = "Y") {
  if (is.data.frame(Y)) Y <- as.matrix(Y)
  if (!is.matrix(Y) || !is.numeric(Y)) stop_arg("'", name, "' must be a numeric matrix")
  if (nrow(Y) < 2 || ncol(Y) < 1) stop_arg("'", name, "' must have at least 2 rows and 1 column")
  if (!all_finite(Y)) stop_arg("'", name, "' must be finite (no NA, NaN or Inf)")
  if (!is.double(Y)) storage.mode(Y) <- "double"
  Y
}

# Affinities as a general dgCMatrix, checked: square (n x n when n is
# given; `against` says what n is, for the message), finite, non-negative and
# symmetric to a relative `tol` entry by entry (as Matrix::isSymmetric()).
# A dgCMatrix is read as it is, with no copy; other classes (dense, triplet,
# symmetric or pattern storage) are converted once. Its slots are checked
# by .affinity_check() in one pass over the stored entries, O(nnz) (the
# first problem is named with its entry). Returns list(P, diagonal, clean):
# the number of stored diagonal entries, and whether P stores neither
# diagonal entries nor zeros.
read_affinities <- function(P, name = "P", n = NULL, against = "the coordinates have",
                            n_threads = 1L, tol = affinity_tol) {
  P <- affinity_matrix(P, name, n, against)
  res <- .affinity_check(P, tol, n_threads, simd_option())
  if (res[1] != 0) affinity_problem(res, name, dim(P), tol)
  list(P = P, diagonal = res[6], clean = res[6] == 0 && res[7] == 0)
}

# The relative difference between an affinity and its transpose that counts
# as asymmetric.
affinity_tol <- 100 * .Machine$double.eps

# read_affinities()'s first half: P as a general dgCMatrix of the right
# size, its entries not yet checked (cost_gradient() checks them in the
# pass that sums them).
affinity_matrix <- function(P, name = "P", n = NULL, against = "the coordinates have") {
  if (is.data.frame(P)) P <- as.matrix(P)
  if (!(is.matrix(P) && is.numeric(P)) && !inherits(P, "Matrix")) {
    stop_arg("'", name, "' must be a numeric matrix or a sparse Matrix (it is ", what_is(P), ")")
  }
  d <- dim(P)
  if (length(d) != 2 || d[1] != d[2]) {
    stop_arg("'", name, "' must be a square matrix (it is ", paste(d, collapse = " x "), ")")
  }
  if (!is.null(n) && d[1] != n) {
    stop_arg("'", name, "' is ", d[1], " x ", d[2], " but ", against, " ", n, " rows")
  }
  if (!inherits(P, "dgCMatrix")) {
    P <- tryCatch(as_general_sparse(P, "CsparseMatrix"), error = function(e) NULL)
    if (is.null(P)) stop_arg("'", name, "' must be a numeric matrix or a sparse Matrix")
  }
  P
}

# The error for what the check of affinities found (res: .affinity_check()'s
# c(kind, column, row, value, mirror, ...)) in `name`, of dimensions d.
affinity_problem <- function(res, name, d, tol) {
  entry <- function(r, c) paste0(name, "[", r, ", ", c, "]")
  col <- res[2]
  row <- res[3]
  stop_arg(switch(res[1],
    paste0("'", name, "' is a damaged sparse matrix: its slots p and i do not describe a ",
           "valid dgCMatrix", if (col <= d[2]) paste0(" (column ", col, ")"),
           "; build it with Matrix::sparseMatrix()"),
    paste0("'", name, "' must be finite (no NA, NaN or Inf): ", entry(row, col), " is ",
           show_value(res[4])),
    paste0("'", name, "' must be non-negative: ", entry(row, col), " = ", show_value(res[4])),
    paste0("'", name, "' must be symmetric: ", entry(row, col), " = ", show_value(res[4]),
           " but ", entry(col, row), " = ", show_value(res[5]), " (a relative difference ",
           "above ", signif(tol, 3), "); symmetrise it, e.g. (", name, " + t(", name, ")) / 2")
  ))
}
