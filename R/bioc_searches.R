# The searches behind LsnnParam's methods (R/bioconductor.R registers them):
# BiocNeighbors' arguments read into lsnn's searches and queries, and the
# results in the form of each version of BiocNeighbors.

# ---- the searches ----

# Evaluates expr under set.seed(seed) with R's generator put back, or, with
# no seed, as it is (drawing from R's generator).
run_seeded <- function(seed, expr) {
  if (is.null(seed)) expr else with_seed(seed, expr)
}

# The data points as rows: X as given, or its transpose when `transposed`.
bioc_rows <- function(X, transposed, name) {
  transposed <- check_flag(transposed, "transposed")
  if (!is.matrix(X) && !is.data.frame(X) && !inherits(X, "Matrix")) {
    # (DelayedArray and other matrix-like classes of Bioconductor)
    X <- tryCatch(as.matrix(X), error = function(e) {
      stop_arg("'", name, "' must be a numeric matrix, a data frame or a sparse Matrix")
    })
  }
  if (is.matrix(X) && !is.numeric(X)) {
    stop_arg("'", name, "' must be numeric (it is ", typeof(X), ")")
  }
  if (!transposed) return(X)
  if (inherits(X, "Matrix")) Matrix::t(X) else t(as.matrix(X))
}

# k checked, capped at `available` with a warning (as BiocNeighbors caps it).
bioc_k <- function(k, available, what) {
  if (inherits(k, "AsIs") && length(k) > 1) {
    stop_arg("'k' must be a single whole number: an LsnnParam finds the same number of ",
             "neighbours for every point")
  }
  k <- check_whole(k, "k", min = 1)
  if (k > available) {
    warning("'k' (", k, ") is more than the ", available, " ", what, ": capped at ", available,
            call. = FALSE)
    k <- as.integer(available)
  }
  k
}

# The number of threads: the parameter's, or more if the call asks for more.
bioc_threads <- function(s, num.threads = 1, BPPARAM = NULL) {
  threads <- if (is.na(s$n_threads)) default_n_threads() else s$n_threads
  if (!is.null(num.threads)) threads <- max(threads, check_n_threads_named(num.threads))
  if (!is.null(BPPARAM)) {
    if (!methods::is(BPPARAM, "BiocParallelParam")) {
      stop_arg("'BPPARAM' must be a BiocParallelParam")
    }
    threads <- max(threads, BiocParallel::bpnworkers(BPPARAM))
  }
  as.integer(threads)
}

check_n_threads_named <- function(num.threads) {
  max(check_whole(num.threads, "num.threads", min = 0), 1L)
}

# Row numbers of `subset` (NULL: all n rows), given as numbers, logicals or
# row names.
bioc_subset <- function(subset, n, row_names, name = "subset") {
  if (is.null(subset)) return(NULL)
  if (is.logical(subset)) {
    if (length(subset) != n || anyNA(subset)) {
      stop_arg("'", name, "' given as logicals must have one TRUE or FALSE per point (", n, ")")
    }
    return(which(subset))
  }
  if (is.character(subset)) {
    if (is.null(row_names)) stop_arg("'", name, "' holds names, but the points have none")
    rows <- match(subset, row_names)
    if (anyNA(rows)) {
      stop_arg("'", name, "' holds names of no point (", subset[is.na(rows)][1], ")")
    }
    return(rows)
  }
  if (!is.numeric(subset) || anyNA(subset) || any(subset != round(subset)) ||
      any(subset < 1) || any(subset > n)) {
    stop_arg("'", name, "' must hold point numbers from 1 to ", n, ", logicals or names")
  }
  as.integer(subset)
}

# The graph of the rows of X (self in column 1) with k other rows each.
bioc_graph <- function(X, k, s, n_threads) {
  n <- NROW(X)
  run_seeded(s$seed, {
    if (s$kind == "knn" || k >= n - 1) {
      # (with every other row a neighbour, locally scaled neighbours are the
      # nearest ones)
      extended_knn(X, n_neighbors = k, n_extra = 0, n_threads = n_threads, nn_kind = s$nn_kind,
                   metric = s$metric, nn_args = s$nn_args)
    } else {
      locally_scaled_knn(X, n_neighbors = k + 1L, n_extra = s$n_extra,
                         scale_from = s$scale_from, scale_to = s$scale_to,
                         n_threads = n_threads, nn_kind = s$nn_kind, metric = s$metric,
                         nn_args = s$nn_args)
    }
  })
}

# The lsnn_index an LsnnIndex holds, checked whole.
index_of <- function(BNINDEX, name = "BNINDEX") {
  index <- BNINDEX@lsnn_index
  if (!is.list(index)) stop_arg("'", name, "' is damaged: its lsnn index is missing")
  index <- structure(index, class = "lsnn_index")
  validate_index(index, paste0(name, "@lsnn_index"), function(...) {
    stop_arg("'", name, "' is damaged: ", ...)
  }, "build it again with BiocNeighbors::buildIndex(X, BNPARAM = LsnnParam())")
  index
}

# An LsnnIndex of the rows of X.
bioc_index <- function(X, param, row_names, bioc1 = FALSE) {
  s <- param_settings(param)
  n_extra <- if (s$kind == "lsnn") s$n_extra + 1L else 0L
  res <- run_seeded(s$seed, extended_knn(
    X, n_neighbors = bioc_index_neighbors, n_extra = n_extra, n_threads = bioc_threads(s, NULL),
    nn_kind = s$nn_kind, metric = s$metric, nn_args = s$nn_args, ret_index = TRUE,
    scale_from = s$scale_from, scale_to = s$scale_to
  ))
  slots <- list("LsnnIndex", lsnn_index = unclass(res$index), param = param, NAMES = row_names)
  if (bioc1) slots$distance <- param@distance
  do.call(methods::new, slots)
}

# The graph (self in column 1, k others) an LsnnIndex gives its own rows:
# from its graph when that is wide enough, else from a new search of its data.
bioc_index_graph <- function(index, k, s, n_threads) {
  graph <- index$graph
  n <- nrow(graph$idx)
  width <- ncol(graph$idx)
  if (s$kind == "knn" || k >= n - 1) {
    if (width >= k + 1L) return(truncate_graph(graph, k + 1L))
  } else if (width >= k + s$n_extra + 2 || width == n) {
    return(enn_to_lsnn(graph, k + 1L, s$scale_from, s$scale_to, n_extra = s$n_extra + 1L,
                       n_threads = n_threads))
  }
  bioc_graph(index$data, k, s, n_threads)
}

# The graph of query rows (no self column) against an LsnnIndex's rows.
bioc_query_graph <- function(index, query, k, s, n_threads) {
  # (the partitioned search finds the exact graph: its queries are exact)
  if (s$nn_kind == "partition") s$nn_kind <- "exact"
  run_seeded(s$seed, {
    if (s$kind == "knn") {
      extended_knn_query(index, query, k, nn_kind = s$nn_kind, n_threads = n_threads,
                         epsilon = s$epsilon)
    } else {
      locally_scaled_knn_query(index, query, n_neighbors = k, n_extra = s$n_extra,
                               nn_kind = s$nn_kind, n_threads = n_threads, epsilon = s$epsilon)
    }
  })
}

# The rows `rows` of a graph without its self column.
without_self <- function(graph, rows = NULL) {
  keep <- seq_len(ncol(graph$idx))[-1]
  if (is.null(rows)) rows <- seq_len(nrow(graph$idx))
  list(idx = graph$idx[rows, keep, drop = FALSE], dist = graph$dist[rows, keep, drop = FALSE])
}

# ---- BiocNeighbors 1.x ----

bioc1_build <- function(X, BNPARAM, transposed = FALSE, ...) {
  X <- bioc_rows(X, transposed, "X")
  bioc_index(X, BNPARAM, rownames(X), bioc1 = TRUE)
}

bioc1_find <- function(X, k, BNPARAM, get.index = TRUE, get.distance = TRUE, last = k,
                       BPPARAM = NULL, subset = NULL, transposed = FALSE, ...) {
  s <- param_settings(BNPARAM)
  X <- bioc_rows(X, transposed, "X")
  n <- NROW(X)
  if (n < 2) stop_arg("'X' must have at least 2 rows")
  k <- bioc_k(k, n - 1L, "other points")
  rows <- bioc_subset(subset, n, rownames(X))
  graph <- bioc_graph(X, k, s, bioc_threads(s, NULL, BPPARAM))
  bioc1_result(without_self(graph, rows), get.index, get.distance, last, k)
}

bioc1_find_index <- function(BNINDEX, k, get.index = TRUE, get.distance = TRUE, last = k,
                             BPPARAM = NULL, subset = NULL, ...) {
  index <- index_of(BNINDEX)
  s <- param_settings(BNINDEX@param, "BNINDEX@param")
  n <- nrow(index$data)
  k <- bioc_k(k, n - 1L, "other points")
  rows <- bioc_subset(subset, n, BNINDEX@NAMES)
  graph <- bioc_index_graph(index, k, s, bioc_threads(s, NULL, BPPARAM))
  bioc1_result(without_self(graph, rows), get.index, get.distance, last, k)
}

bioc1_query <- function(BNINDEX, query, k, get.index = TRUE, get.distance = TRUE, last = k,
                        BPPARAM = NULL, subset = NULL, transposed = FALSE, ...) {
  k <- bioc_k(k, nrow(index_of(BNINDEX)$data), "reference points")
  graph <- bioc_query(BNINDEX, query, k, subset, transposed, NULL, BPPARAM)
  bioc1_result(graph, get.index, get.distance, last, k)
}

# The k nearest reference points of the (subset of the) query rows, both
# generations' queryKNN().
bioc_query <- function(BNINDEX, query, k, subset, transposed, num.threads, BPPARAM) {
  index <- index_of(BNINDEX)
  s <- param_settings(BNINDEX@param, "BNINDEX@param")
  query <- bioc_rows(query, transposed, "query")
  rows <- bioc_subset(subset, NROW(query), rownames(query))
  if (!is.null(rows)) query <- query[rows, , drop = FALSE]
  if (NROW(query) == 0) {
    # (an empty result, as BiocNeighbors' own parameters give, of the columns
    # of the data the index was built on)
    d <- if (is.null(index$pca)) ncol(index$data) else nrow(index$pca$rotation)
    if (NCOL(query) != d) {
      stop_arg("'query' has ", NCOL(query), " columns; the index was built on ", d)
    }
    return(list(idx = matrix(integer(), 0, k), dist = matrix(numeric(), 0, k)))
  }
  bioc_query_graph(index, query, k, s, bioc_threads(s, num.threads, BPPARAM))
}

# BiocNeighbors 1.x's list(index, distance) of the last `last` of k columns.
bioc1_result <- function(graph, get.index, get.distance, last, k) {
  get.index <- check_flag(get.index, "get.index")
  get.distance <- check_flag(get.distance, "get.distance")
  last <- check_whole(last, "last", min = 1)
  last <- min(last, k)
  cols <- seq.int(k - last + 1L, k)
  out <- list()
  if (get.index) out$index <- unname(graph$idx[, cols, drop = FALSE])
  if (get.distance) out$distance <- unname(graph$dist[, cols, drop = FALSE])
  out
}

# ---- BiocNeighbors 2.x ----

bioc2_build <- function(X, BNPARAM, transposed = FALSE) {
  X <- bioc_rows(X, transposed, "X")
  bioc_index(X, BNPARAM, rownames(X))
}

# The data of a findKNN() call on data, in rows, with its parameter.
bioc2_data <- function(X, BNPARAM, transposed = FALSE, ...) {
  list(X = bioc_rows(X, transposed, "X"), param = BNPARAM)
}

# findKNN() (and with last_only, findDistance()) on an LsnnIndex or on data
# from bioc2_data().
bioc2_find <- function(source, k, get.index, get.distance, num.threads, subset, ...,
                       BPPARAM = NULL, last_only = FALSE) {
  if (methods::is(source, "LsnnIndex")) {
    index <- index_of(source)
    s <- param_settings(source@param, "BNINDEX@param")
    n <- nrow(index$data)
    row_names <- source@NAMES
  } else {
    s <- param_settings(source$param)
    n <- NROW(source$X)
    if (n < 2) stop_arg("'X' must have at least 2 rows")
    row_names <- rownames(source$X)
  }
  k <- bioc_k(k, n - 1L, "other points")
  rows <- bioc_subset(subset, n, row_names)
  threads <- bioc_threads(s, num.threads, BPPARAM)
  graph <- if (methods::is(source, "LsnnIndex")) {
    bioc_index_graph(index, k, s, threads)
  } else {
    bioc_graph(source$X, k, s, threads)
  }
  bioc2_result(without_self(graph, rows), get.index, get.distance, last_only)
}

bioc2_query <- function(BNINDEX, query, k, get.index, get.distance, num.threads, subset,
                        transposed, ..., BPPARAM = NULL, last_only = FALSE) {
  k <- bioc_k(k, nrow(index_of(BNINDEX)$data), "reference points")
  graph <- bioc_query(BNINDEX, query, k, subset, transposed, num.threads, BPPARAM)
  bioc2_result(graph, get.index, get.distance, last_only)
}

# BiocNeighbors 2.x's list(index, distance), each n x k, k x n with
# "transposed", or left out with FALSE; with last_only, the distance to the
# k-th neighbour alone (findDistance()).
bioc2_result <- function(graph, get.index, get.distance, last_only) {
  if (last_only) return(unname(graph$dist[, ncol(graph$dist)]))
  shape <- function(x, how, name) {
    if (isFALSE(how)) return(NULL)
    if (isTRUE(how) || identical(how, "normal")) return(unname(x))
    if (identical(how, "transposed")) return(unname(t(x)))
    stop_arg("'", name, "' must be TRUE, FALSE, \"normal\" or \"transposed\"")
  }
  out <- list()
  out$index <- shape(graph$idx, get.index, "get.index")
  out$distance <- shape(graph$dist, get.distance, "get.distance")
  out
}
