# The neighbour graphs lsnn accepts, read into list(idx, dist) and checked.

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
