# Argument checks shared by the user-facing functions. Each stops with a
# message naming the argument, without the internal call.

stop_arg <- function(...) stop(..., call. = FALSE)

check_whole <- function(x, name, min = -Inf, max = Inf) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) || x != round(x)) {
    stop_arg("'", name, "' must be a single whole number")
  }
  if (x < min) stop_arg("'", name, "' must be at least ", min, " (it is ", x, ")")
  if (x > max) stop_arg("'", name, "' must be at most ", max, " (it is ", x, ")")
  as.integer(x)
}

check_flag <- function(x, name) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) stop_arg("'", name, "' must be TRUE or FALSE")
  x
}

check_choice <- function(x, name, choices) {
  if (!is.character(x) || length(x) != 1 || !x %in% choices) {
    stop_arg("'", name, "' must be one of ", paste0('"', choices, '"', collapse = ", "))
  }
  x
}

check_n_threads <- function(n_threads) {
  # 0 runs on the calling thread only, as 1 does.
  max(check_whole(n_threads, "n_threads", min = 0), 1L)
}

# The data a neighbour search runs on: a numeric matrix, the numeric columns
# of a data frame, or a dgCMatrix. Returns list(kind = "dense", x = double
# matrix) or list(kind = "sparse", rows = t(X) as dgCMatrix, n, d).
prepare_data <- function(X, metric, caller = "X") {
  if (is.data.frame(X)) {
    numeric_cols <- vapply(X, is.numeric, logical(1))
    if (!any(numeric_cols)) stop_arg("'", caller, "' has no numeric columns")
    if (!all(numeric_cols)) {
      message("using the ", sum(numeric_cols), " numeric columns of '", caller, "'; dropped: ",
              paste(names(X)[!numeric_cols], collapse = ", "))
    }
    X <- as.matrix(X[, numeric_cols, drop = FALSE])
  }
  if (inherits(X, "dgCMatrix")) {
    if (nrow(X) < 2) stop_arg("'", caller, "' must have at least 2 rows")
    if (ncol(X) < 1) stop_arg("'", caller, "' must have at least 1 column")
    if (length(X@x) > 0 && !all(is.finite(range(X@x)))) stop_arg("'", caller, "' contains NA, NaN or infinite values")
    if (!metric %in% c("euclidean", "cosine")) {
      stop_arg("sparse data supports metric = \"euclidean\" or \"cosine\"; ",
               "use as.matrix() for metric = \"", metric, "\"")
    }
    return(list(kind = "sparse", rows = Matrix::t(X), n = nrow(X), d = ncol(X)))
  }
  if (inherits(X, "Matrix")) {
    stop_arg("'", caller, "' is a ", class(X)[1], "; lsnn takes a numeric matrix, a data frame ",
             "or a Matrix::dgCMatrix (convert with as(", caller, ", \"CsparseMatrix\") or as.matrix())")
  }
  if (!is.matrix(X)) {
    stop_arg("'", caller, "' must be a numeric matrix, a data frame or a Matrix::dgCMatrix, ",
             "with one row per observation")
  }
  if (!is.numeric(X)) stop_arg("'", caller, "' must be numeric (it is ", typeof(X), ")")
  if (nrow(X) < 2) stop_arg("'", caller, "' must have at least 2 rows")
  if (ncol(X) < 1) stop_arg("'", caller, "' must have at least 1 column")
  # min() and max() are NA or infinite exactly when some value is, without
  # the n x d logical matrix that is.finite() would allocate (or the copy of
  # X that range() makes); details only on failure.
  if (!is.finite(min(X)) || !is.finite(max(X))) {
    bad <- !is.finite(X)
    stop_arg("'", caller, "' contains ", sum(bad), " NA, NaN or infinite values (first in row ",
             which(rowSums(bad) > 0)[1], ")")
  }
  # Only when needed: on a double matrix, storage.mode<- returns an ALTREP
  # wrapper that the C++ side would materialise as a full copy of X.
  if (!is.double(X)) storage.mode(X) <- "double"
  list(kind = "dense", x = X, n = nrow(X), d = ncol(X))
}

# A graph is list(idx, dist): n x k matrices, idx whole numbers in 1..n,
# dist finite and non-negative. Returns it with idx as an integer matrix and
# dist as a double matrix and nothing else.
check_graph <- function(graph, name = "graph", self_first = TRUE) {
  if (!is.list(graph) || is.data.frame(graph) || is.null(graph$idx) || is.null(graph$dist)) {
    stop_arg("'", name, "' must be a graph: a list with matrices 'idx' and 'dist'")
  }
  idx <- graph$idx
  dist <- graph$dist
  if (!is.matrix(idx) || !is.numeric(idx)) stop_arg("'", name, "$idx' must be a numeric matrix")
  if (!is.matrix(dist) || !is.numeric(dist)) stop_arg("'", name, "$dist' must be a numeric matrix")
  if (!identical(dim(idx), dim(dist))) {
    stop_arg("'", name, "$idx' and '", name, "$dist' must have the same dimensions (",
             paste(dim(idx), collapse = " x "), " and ", paste(dim(dist), collapse = " x "), ")")
  }
  n <- nrow(idx)
  if (n < 1 || ncol(idx) < 1) stop_arg("'", name, "' is empty")
  if (anyNA(idx)) stop_arg("'", name, "$idx' contains NA")
  if (any(idx != round(idx))) stop_arg("'", name, "$idx' must contain whole numbers")
  if (min(idx) < 1 || max(idx) > n) {
    stop_arg("'", name, "$idx' must contain row numbers from 1 to ", n, " (found ",
             if (min(idx) < 1) min(idx) else max(idx), ")")
  }
  if (anyNA(dist)) stop_arg("'", name, "$dist' contains NA or NaN")
  if (any(dist < 0)) stop_arg("'", name, "$dist' contains negative distances")
  if (any(is.infinite(dist))) stop_arg("'", name, "$dist' contains infinite distances")
  storage.mode(idx) <- "integer"
  storage.mode(dist) <- "double"
  if (self_first && any(idx[, 1] != seq_len(n))) {
    stop_arg("the first column of '", name, "$idx' must be the row itself (row ",
             which(idx[, 1] != seq_len(n))[1], " is not); lsnn graphs list each row first")
  }
  list(idx = idx, dist = dist)
}

# Whether x is a graph (list with idx and dist) rather than data.
is_graph <- function(x) {
  is.list(x) && !is.data.frame(x) && !is.null(x$idx) && !is.null(x$dist)
}

check_scale_columns <- function(scale_from, scale_to, n_cols) {
  scale_from <- check_whole(scale_from, "scale_from", min = 1)
  scale_to <- check_whole(scale_to, "scale_to", min = 1)
  if (scale_from > scale_to) {
    stop_arg("'scale_from' (", scale_from, ") must not be greater than 'scale_to' (", scale_to, ")")
  }
  if (scale_to > n_cols) {
    stop_arg("'scale_to' (", scale_to, ") is beyond the graph's ", n_cols,
             " columns: the local scale needs at least scale_to neighbours per row")
  }
  c(scale_from, scale_to)
}
