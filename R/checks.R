# Argument checks shared by every exported function. Each check stops with a
# message that names the argument first ('k' must be ...), without the
# internal call, and returns the value in the type the code below it needs.
# The rules are the same everywhere: counts are whole numbers (never
# truncated), real parameters finite, flags TRUE or FALSE (not NA), and a
# range is stated in the message with the value given.

stop_arg <- function(...) stop(..., call. = FALSE)

big_int <- .Machine$integer.max

# How a value is shown in a message: numbers in full up to 15 digits.
show_value <- function(x) {
  if (is.numeric(x) && length(x) == 1) format(x, digits = 15) else deparse(x)[1]
}

# A whole number in [min, max], returned as an integer. Counts that lsnn
# caps anyway (neighbours, extra neighbours) use clamp = TRUE: any larger
# whole number becomes `max` (by default the largest integer).
check_whole <- function(x, name, min = -Inf, max = big_int, clamp = FALSE) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) || x != round(x)) {
    stop_arg("'", name, "' must be a single whole number",
             if (is.numeric(x) && length(x) == 1 && is.finite(x)) {
               paste0(" (it is ", show_value(x), ")")
             })
  }
  if (x < min) stop_arg("'", name, "' must be at least ", min, " (it is ", show_value(x), ")")
  if (x > max) {
    if (clamp) return(as.integer(max))
    stop_arg("'", name, "' must be at most ", show_value(max), " (it is ", show_value(x), ")")
  }
  as.integer(x)
}

# A number of samples: a whole number of at least 1, possibly beyond the
# integer range; returned as a double.
check_sample_size <- function(x, name, max = Inf) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) || x != round(x) || x < 1) {
    stop_arg("'", name, "' must be a whole number of at least 1",
             if (is.numeric(x) && length(x) == 1 && is.finite(x)) {
               paste0(" (it is ", show_value(x), ")")
             })
  }
  if (x > max) {
    stop_arg("'", name, "' must be at most ", format(max, scientific = FALSE), " (it is ",
             show_value(x), ")")
  }
  as.numeric(x)
}

# A single finite number in a range; `above`/`below` make a bound strict.
check_number <- function(x, name, min = -Inf, max = Inf, above = FALSE, below = FALSE) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x)) {
    stop_arg("'", name, "' must be a single finite number")
  }
  low <- if (above) x <= min else x < min
  high <- if (below) x >= max else x > max
  if (low || high) {
    range <- if (is.finite(min) && is.finite(max)) {
      paste0("between ", min, " and ", max, if (above || below) " (exclusive)")
    } else if (is.finite(min)) {
      if (above && min == 0) "positive" else if (above) paste("greater than", min) else
        paste("at least", min)
    } else {
      if (below) paste("less than", max) else paste("at most", max)
    }
    stop_arg("'", name, "' must be ", range, " (it is ", show_value(x), ")")
  }
  as.double(x)
}

check_flag <- function(x, name) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) stop_arg("'", name, "' must be TRUE or FALSE")
  x
}

# Whether x is a single finite number of at least `min` (greater with
# above = TRUE) and at most `max`, and with whole = TRUE a whole number: the
# test of the numbers stored in lsnn's own objects (indexes, models), whose
# checks say what each element should be.
is_scalar_number <- function(x, min = -Inf, max = Inf, above = FALSE, whole = FALSE) {
  is.numeric(x) && length(x) == 1 && is.finite(x) && (if (above) x > min else x >= min) &&
    x <= max && (!whole || x == round(x))
}

# Whether x is a single string among `choices`.
is_word <- function(x, choices) {
  is.character(x) && length(x) == 1 && !is.na(x) && x %in% choices
}

# What x is, for a message about an element of the wrong kind: a scalar's
# value, else its type and dimensions ("a 149 x 2 double matrix").
what_is <- function(x) {
  if (is.null(x)) return("missing")
  if (is.null(dim(x)) && length(x) == 1 && (is.numeric(x) || is.logical(x))) return(show_value(x))
  if (is.null(dim(x)) && length(x) == 1 && is.character(x)) return(paste0('"', x, '"'))
  d <- dim(x)
  kind <- if (isS4(x)) class(x)[1] else if (is.matrix(x)) paste(typeof(x), "matrix") else
    paste(typeof(x), if (is.list(x)) "" else "vector")
  paste0("a ", if (!is.null(d)) paste0(paste(d, collapse = " x "), " "), trimws(kind),
         if (is.null(d)) paste0(" of length ", length(x)))
}

# A saved object's format version, compared as a number (1L and 1 are the
# same version): `damaged(...)` stops when it is not a number at all, a
# number other than `current` stops with `remedy`.
check_format_version <- function(version, current, name, damaged, remedy) {
  if (!is.numeric(version) || length(version) != 1 || is.na(version)) {
    damaged("'", name, "$format_version' must be a number (it is ",
            if (is.null(version)) "missing" else show_value(version), ")")
  }
  if (version != current) {
    stop_arg("'", name, "' has format version ", show_value(version), "; this version of lsnn ",
             "reads version ", current, ": ", remedy)
  }
  invisible(version)
}

# ret_extra of neighbor_embedding(): TRUE/FALSE, or as in uwot the names of
# the extras wanted, from `allowed`; of these, `method` (the method's name
# for the message) returns only `returned`.
check_ret_extra <- function(x, allowed = c("nn", "P", "fgraph"), returned = allowed,
                            method = NULL) {
  if (is.character(x)) {
    if (length(x) == 0 || anyNA(x)) stop_arg("'ret_extra' must be TRUE, FALSE or names of extras")
    unknown <- setdiff(x, allowed)
    if (length(unknown) > 0) {
      stop_arg("'ret_extra' asks for ", paste0('"', unknown, '"', collapse = ", "),
               ", which lsnn does not return",
               if ("model" %in% unknown) " (it keeps no model to embed new data)",
               "; it can return ", paste0('"', allowed, '"', collapse = ", "),
               ", or TRUE for all details")
    }
    other <- setdiff(x, returned)
    if (length(other) > 0) {
      stop_arg("'ret_extra' asks for ", paste0('"', other, '"', collapse = ", "),
               ", which method = \"", method, "\" does not return; it can return ",
               paste0('"', returned, '"', collapse = ", "), ", or TRUE for all details")
    }
    return(unique(x))
  }
  check_flag(x, "ret_extra")
}

check_choice <- function(x, name, choices) {
  if (!is.character(x) || length(x) != 1 || !x %in% choices) {
    stop_arg("'", name, "' must be one of ", paste0('"', choices, '"', collapse = ", "))
  }
  x
}

# The metrics of the neighbour searches (and of the quality measures' data).
knn_metrics <- c("euclidean", "cosine", "correlation", "manhattan", "hamming")

check_n_threads <- function(n_threads) {
  # 0 runs on the calling thread only, as 1 does.
  max(check_whole(n_threads, "n_threads", min = 0), 1L)
}

all_finite <- function(x) {
  length(x) == 0 || (is.finite(min(x)) && is.finite(max(x)))
}

# ---- randomness ----

# The seed of the core's generators, drawn from R's so that set.seed()
# reproduces a run: two non-negative 31-bit integers, which the glue joins
# into one 64-bit seed (src/r_inputs.h). Every random step of lsnn takes its
# seed here.
draw_seed <- function() {
  sample.int(.Machine$integer.max, 2L) - 1L
}

# The seed of one step of a larger random computation, as draw_seed() gives
# seeds: the core's hash (hash64() of random.h, the way the core seeds its
# work items) of a seed of draw_seed() and up to three whole numbers naming
# the step, so that a step's numbers depend on the computation's seed and
# on which step it is, not on when or where it runs.
derive_seed <- function(seed, ...) .derive_seed(seed, as.double(c(...)))

# `m` distinct rows of 1..n in increasing order, drawn from a seed of
# draw_seed() (without R's generator).
sample_rows <- function(seed, n, m) .sample_rows(seed, as.double(n), as.double(m))

# Evaluates expr after set.seed(seed) (unless seed is NULL) and puts R's
# generator back as it was.
with_seed <- function(seed, expr) {
  genv <- globalenv()
  old_seed <- if (exists(".Random.seed", genv, inherits = FALSE)) get(".Random.seed", genv)
  on.exit({
    if (is.null(old_seed)) {
      if (exists(".Random.seed", genv, inherits = FALSE)) rm(".Random.seed", envir = genv)
    } else {
      assign(".Random.seed", old_seed, envir = genv)
    }
  })
  if (!is.null(seed)) set.seed(seed)
  expr
}

# The `seed` argument of the functions that draw random numbers: the call
# evaluated again without it, under set.seed(seed), with R's generator put
# back afterwards, so that the result depends on the seed alone (every random
# step draws from R's generator: the core's seeds through draw_seed(), the
# eigensolvers' and starts' random vectors directly) and the user's stream
# is untouched.
with_seed_of_call <- function(seed, call, fun, env) {
  seed <- check_whole(seed, "seed", min = -big_int, max = big_int)
  call[[1]] <- fun
  call$seed <- NULL
  with_seed(seed, eval(call, env))
}

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
  if (inherits(X, "Matrix")) X <- read_matrix_class(X, caller)
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
    if (methods::is(X, "sparseMatrix")) {
      stop_arg("sparse data supports metric = \"euclidean\" or \"cosine\"; ",
               "use as.matrix() for metric = \"hamming\"")
    }
    X <- read_matrix_class(X, caller)
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

# ---- graphs ----

# Every function that takes a neighbour graph reads it with read_graph() and
# checks it with check_graph(), once, where it enters. The forms read:
# - list(idx, dist) (lsnn, uwot, rnndescent, RcppHNSW); other elements dropped;
# - BiocNeighbors' list(index, distance): its rows do not list the point
#   itself, so when no row does, a first column of the row itself at
#   distance 0 is added (a graph in which some rows list themselves is taken
#   as it is);
# - uwot's ret_nn = TRUE output, a list of such graphs named by metric, of
#   which there must be one;
# - the sparse distance matrix uwot::umap(nn_method = ) takes: n x n, column
#   j holding the distances from point j to its neighbours (diagonal entries
#   ignored; every column must hold the same number of neighbours). Its rows
#   become list(idx, dist), the point itself first.
# A graph of new rows among reference rows (query = TRUE: the nn_method of
# neighbor_embedding_transform()) is read the same way, except that no self
# column is added and a sparse matrix is n_ref x m, column j holding new row
# j's distances to its reference rows (as uwot::umap_transform() takes it).
# No form lists a neighbour twice in a row: no search that makes them does,
# and a repeated neighbour would count twice in every affinity and local
# scale, so check_graph() refuses it. Only a triplet sparse matrix
# (dgTMatrix) can store a pair twice, as the union of two searches' pairs
# does; Matrix would add the two distances, so read_graph() keeps each pair
# once, at its smaller distance, with a warning.

# Whether x is one of the list forms of a graph (a sparse matrix is data
# where data is expected, so it is not "graph-like").
is_graph <- function(x) {
  is.list(x) && !is.data.frame(x) &&
    ((!is.null(x$idx) && !is.null(x$dist)) || (!is.null(x$index) && !is.null(x$distance)))
}

is_graph_like <- function(x) {
  is_graph(x) || is_seurat_neighbor(x) || (is.list(x) && !is.data.frame(x) && length(x) > 0 &&
                    all(vapply(x, function(g) is_graph(g) || is_sparse_graph(g), logical(1))))
}

is_sparse_graph <- function(x) inherits(x, "Matrix") && methods::is(x, "sparseMatrix")

# A graph in any of the forms above as list(idx, dist), not yet checked.
# BiocNeighbors' form also has `parts`, the names of its elements, and
# `shift`, the columns added in front (1 for the self column), so that
# messages name what was given.
read_graph <- function(graph, name, query = FALSE) {
  if (is_seurat_neighbor(graph)) {
    return(list(idx = graph@nn.idx, dist = graph@nn.dist, parts = c("nn.idx", "nn.dist"),
                shift = 0L))
  }
  if (is_graph(graph)) {
    if (!is.null(graph$idx)) return(list(idx = graph$idx, dist = graph$dist))
    if (query) {
      return(list(idx = graph$index, dist = graph$distance, parts = c("index", "distance"),
                  shift = 0L))
    }
    return(with_self_column(graph$index, graph$distance))
  }
  if (is_sparse_graph(graph)) return(sparse_distances_to_graph(graph, name, query))
  if (is_graph_like(graph)) {
    if (length(graph) == 1) return(read_graph(graph[[1]], name, query))
    metrics <- names(graph)
    if (is.null(metrics)) metrics <- paste0("[[", seq_along(graph), "]]")
    stop_arg("'", name, "' holds ", length(graph), " graphs (", paste(metrics, collapse = ", "),
             "): choose one, e.g. ", name, "$", metrics[1])
  }
  stop_arg("'", name, "' must be a graph: ", graph_forms)
}

graph_forms <- paste("a list with matrices 'idx' and 'dist' (or BiocNeighbors' 'index' and",
                     "'distance'), uwot's nn, a Seurat Neighbor object or a sparse distance",
                     "matrix")

# Seurat's Neighbor object (SeuratObject): the graph in slots nn.idx and
# nn.dist, each row itself first, as lsnn's own.
is_seurat_neighbor <- function(x) {
  isS4(x) && methods::is(x, "Neighbor") && methods::.hasSlot(x, "nn.idx") &&
    methods::.hasSlot(x, "nn.dist")
}

# BiocNeighbors' index and distance, the row itself added in front when no
# row lists it.
with_self_column <- function(index, distance) {
  parts <- c("index", "distance")
  if (!is.matrix(index) || !is.numeric(index) || nrow(index) < 1 ||
      any(index == row(index), na.rm = TRUE) ||
      !is.matrix(distance) || !is.numeric(distance) || nrow(distance) != nrow(index)) {
    return(list(idx = index, dist = distance, parts = parts, shift = 0L))
  }
  list(idx = cbind(seq_len(nrow(index)), index), dist = cbind(0, distance), parts = parts,
       shift = 1L)
}

# uwot's sparse distance matrix as list(idx, dist): row j of the graph lists
# the entries of column j by increasing distance (ties by row number), after
# j itself at distance 0; with query = TRUE (rows: reference rows, columns:
# new rows) without the self column, and the diagonal is kept.
sparse_distances_to_graph <- function(M, name, query = FALSE) {
  M <- read_sparse_distances(M, name)
  n <- ncol(M)
  if (!query && n != nrow(M)) {
    stop_arg("'", name, "' must be a square sparse distance matrix (it is ", nrow(M), " x ",
             n, ")")
  }
  to <- rep.int(seq_len(n), diff(M@p))
  from <- M@i + 1L
  d <- M@x
  if (!query) {
    keep <- from != to
    from <- from[keep]
    to <- to[keep]
    d <- d[keep]
  }
  counts <- tabulate(to, n)
  if (n < 1 || min(counts) < 1 || max(counts) != min(counts)) {
    stop_arg("'", name, "' must hold the same number of neighbours (at least 1) in every ",
             "column of the sparse distance matrix (it holds ",
             if (n < 1) "no columns" else paste(min(counts), "to", max(counts)), ")")
  }
  o <- order(to, d, from)
  k <- counts[1]
  idx <- matrix(from[o], n, k, byrow = TRUE)
  dist <- matrix(d[o], n, k, byrow = TRUE)
  if (query) return(list(idx = idx, dist = dist))
  list(idx = cbind(seq_len(n), idx), dist = cbind(0, dist))
}

# A sparse distance matrix as a general double dgCMatrix. A triplet matrix
# may store a pair more than once (the union of two searches' pairs), which
# the conversion would add up: each pair is kept once, at its smallest
# distance, with a warning.
read_sparse_distances <- function(M, name) {
  unreadable <- function(e) {
    stop_arg("'", name, "' must be a numeric sparse distance matrix")
  }
  M <- tryCatch(methods::as(methods::as(M, "dMatrix"), "generalMatrix"), error = unreadable)
  if (methods::is(M, "TsparseMatrix")) {
    pair <- as.double(M@j) * nrow(M) + M@i
    if (anyDuplicated(pair)) {
      o <- order(pair, M@x)
      first <- o[!duplicated(pair[o])]
      warning("'", name, "' stores ", length(pair) - length(first), " distance",
              if (length(pair) - length(first) > 1) "s", " of pairs it already holds ",
              "(a neighbour listed twice); each pair is kept once, at its smallest distance",
              call. = FALSE)
      M <- Matrix::sparseMatrix(i = M@i[first] + 1L, j = M@j[first] + 1L, x = M@x[first],
                                dims = dim(M))
    }
  }
  tryCatch(methods::as(M, "CsparseMatrix"), error = unreadable)
}

# A graph is list(idx, dist): n x k matrices, idx whole numbers in 1..n,
# dist finite and non-negative (rounding errors of single precision, down to
# -1e-6 times the largest distance, become 0), no row listing a neighbour
# twice. With self_first (every graph consumer), each row also starts with
# the row itself at distance 0 and (sorted) its distances do not decrease:
# the format uwot takes. A graph of new rows among n_ref reference rows
# (n_ref given: idx in 1..n_ref) has no self column and is read as
# read_graph(query = TRUE) reads it. Returns the graph with idx as an
# integer matrix and dist as a double matrix and nothing else.
check_graph <- function(graph, name = "graph", self_first = TRUE, min_cols = 1, n_ref = NULL,
                        sorted = self_first) {
  query <- !is.null(n_ref)
  graph <- read_graph(graph, name, query = query)
  idx <- graph$idx
  dist <- graph$dist
  parts <- if (is.null(graph$parts)) c("idx", "dist") else graph$parts
  shift <- if (is.null(graph$shift)) 0L else graph$shift
  label <- paste0(name, "$", parts)
  if (!is.matrix(idx) || !is.numeric(idx)) stop_arg("'", label[1], "' must be a numeric matrix")
  if (!is.matrix(dist) || !is.numeric(dist)) stop_arg("'", label[2], "' must be a numeric matrix")
  if (!identical(dim(idx), dim(dist))) {
    stop_arg("'", label[1], "' and '", label[2], "' must have the same dimensions (",
             paste(dim(idx) - c(0, shift), collapse = " x "), " and ",
             paste(dim(dist) - c(0, shift), collapse = " x "), ")")
  }
  n <- nrow(idx)
  if (n < 1 || ncol(idx) < 1) stop_arg("'", name, "' is empty")
  if (ncol(idx) < min_cols) {
    stop_arg("'", name, "' must have at least ", min_cols, " columns (",
             if (self_first) "the row itself first; ", "it has ", ncol(idx), ")")
  }
  if (is.null(n_ref)) n_ref <- n
  idx <- check_index_values(idx, label[1], n_ref)
  if (!is.double(dist)) storage.mode(dist) <- "double"
  problem <- .graph_problem(idx, dist, self_first, sorted, n_ref)
  if (problem[1] == 4 && min(dist) >= -1e-6 * max(1, max(dist))) {
    # Libraries that compute distances in single precision (RcppHNSW's
    # cosine) report a row's distance to itself as about -1e-7: rounding,
    # taken as 0.
    dist[dist < 0] <- 0
    problem <- .graph_problem(idx, dist, self_first, sorted, n_ref)
  }
  if (problem[1] != 0) {
    stop_arg(graph_problem_text(problem, idx, name, n_ref, self_first, query, parts, shift))
  }
  list(idx = idx, dist = dist)
}

# The sentence for a problem of .graph_problem() in graph `name`, whose
# elements are `parts` (as given) and whose first `shift` columns were added
# when it was read (column numbers are those of the graph as given).
graph_problem_text <- function(problem, idx, name, n_ref, self_first, reference,
                               parts = c("idx", "dist"), shift = 0L) {
  row <- problem[2]
  value <- problem[3]
  column <- problem[4] - shift
  idx_label <- paste0("'", name, "$", parts[1], "'")
  dist_label <- paste0("'", name, "$", parts[2], "'")
  switch(problem[1],
    paste0(idx_label, " contains NA (row ", row, ")"),
    paste0(idx_label, " must contain ", if (reference) "reference ", "row numbers from 1 to ",
           n_ref, " (found ", value, " in row ", row, ")"),
    paste0(dist_label, " contains NA or NaN (row ", row, ")"),
    paste0(dist_label, " contains negative distances (row ", row, ")"),
    paste0(dist_label, " contains infinite distances (row ", row, ")"),
    paste0("the first column of ", idx_label, " must be the row itself (row ", row,
           " is not); lsnn graphs list each row first"),
    paste0(dist_label, " must not decrease along a row (row ", row, ", column ", column,
           "); sort the graph with sort_knn_graph(",
           if (!self_first) "enforce_self_first = FALSE", ")"),
    paste0(dist_label, " must be 0 for the row itself, in column 1 (row ", row, " is not)"),
    paste0(idx_label, " lists ", value, " twice in row ", row, " (columns ",
           match(value, idx[row, ]) - shift, " and ", column, "); a graph lists each ",
           "neighbour once")
  )
}

# idx as an integer matrix, its values whole numbers in 1..n; `label` names
# it in messages ('g$idx'). Integer matrices of a graph are checked by
# .graph_problem() in the same pass as the distances.
check_index_values <- function(idx, label, n, integer_too = FALSE) {
  if (is.integer(idx) && !integer_too) return(idx)
  if (anyNA(idx)) {
    stop_arg("'", label, "' contains NA (row ", which(rowSums(is.na(idx)) > 0)[1], ")")
  }
  if (!is.integer(idx) && any(idx != round(idx))) {
    stop_arg("'", label, "' must contain whole numbers (row ",
             which(rowSums(idx != round(idx)) > 0)[1], ")")
  }
  if (min(idx) < 1 || max(idx) > n) {
    bad <- which(rowSums(idx < 1 | idx > n) > 0)[1]
    stop_arg("'", label, "' must contain row numbers from 1 to ", n, " (row ", bad, ")")
  }
  # (storage.mode<- copies even when the type is already right)
  if (!is.integer(idx)) storage.mode(idx) <- "integer"
  idx
}

# The idx matrix of a graph or a bare n x k matrix of row numbers (as
# rnndescent's neighbor_overlap() takes), checked: whole numbers in 1..n,
# none twice in a row.
check_index_matrix <- function(g, name) {
  bare <- is.matrix(g)
  idx <- if (bare) g else read_graph_idx(g, name)
  label <- if (bare) name else paste0(name, "$idx")
  if (!is.numeric(idx) || !is.matrix(idx)) {
    stop_arg("'", label, "' must be a numeric matrix of row numbers")
  }
  if (nrow(idx) < 1 || ncol(idx) < 1) stop_arg("'", label, "' is empty")
  idx <- check_index_values(idx, label, nrow(idx), integer_too = TRUE)
  repeated <- .repeated_neighbour(idx, nrow(idx))
  if (repeated[1] > 0) {
    stop_arg("'", label, "' lists ", repeated[2], " twice in row ", repeated[1], " (columns ",
             match(repeated[2], idx[repeated[1], ]), " and ", repeated[3], "); a graph lists ",
             "each neighbour once")
  }
  idx
}

read_graph_idx <- function(g, name) {
  if (is.list(g) && !is.data.frame(g) && !is.null(g$idx)) return(g$idx)
  read_graph(g, name)$idx
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
# read exactly from the distances of a dist object.
graph_of_inputs <- function(inputs, n_cols, n_threads, verbose, caller) {
  if (!is.null(inputs$graph)) return(inputs$graph)
  if (!is.null(inputs$distances)) {
    if (verbose) message(caller, ": ", n_cols - 1L, "-nearest neighbours from the distances")
    return(.knn_of_distances(inputs$distances$d, inputs$n, as.integer(min(n_cols, inputs$n)),
                             n_threads, verbose))
  }
  kind <- search_kind(inputs$n)
  if (verbose) message(caller, ": ", kind, " ", n_cols - 1L, "-nearest neighbours")
  search_knn(inputs$data, n_cols, "euclidean", kind, n_threads, verbose)
}

# The one rule for the functions that search neighbours themselves
# (neighbor_embedding(), umap_affinities()): the exact search up to 20,000
# rows, the approximate one above (documented in ?extended_knn, "Which search
# runs").
search_kind <- function(n) {
  if (n > 20000) "approx" else "exact"
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

# Generated data that cannot fit in memory is an error naming the argument:
# on Linux, where a large allocation may succeed at first and the kernel then
# ends R when the pages are touched, against the machine's total memory (from
# /proc/meminfo); elsewhere R's own "cannot allocate" error is left to speak.
check_fits_memory <- function(n_values, name) {
  bytes <- 8 * n_values
  total <- machine_memory_bytes()
  if (!is.na(total) && bytes > total) {
    stop_arg(sprintf("'%s' asks for %.3g GB of data, more than this machine's memory (%.3g GB)",
                     name, bytes / 1e9, total / 1e9))
  }
  invisible(bytes)
}

machine_memory_bytes <- function() {
  info <- tryCatch(suppressWarnings(readLines("/proc/meminfo", n = 1L)),
                   error = function(e) character(0))
  kb <- suppressWarnings(as.numeric(sub("^MemTotal:\\s*([0-9]+) kB.*$", "\\1", info)))
  if (length(kb) != 1 || is.na(kb)) NA_real_ else 1024 * kb
}

# The value of `expr`, or `fallback` when it fails (a solver that did not
# converge, say). A limit of setTimeLimit() is an error too, raised wherever
# R happens to be when it runs out: it goes on to the caller, never taken
# for the method's failure (the run would go on with no limit left).
value_or <- function(expr, fallback) {
  tryCatch(expr, error = function(e) {
    if (is_time_limit(e)) stop(e)
    fallback
  })
}

is_time_limit <- function(e) {
  limits <- c("reached elapsed time limit", "reached CPU time limit",
              "reached session elapsed time limit", "reached session CPU time limit")
  conditionMessage(e) %in% c(limits, vapply(limits, gettext, "", domain = "R"))
}
