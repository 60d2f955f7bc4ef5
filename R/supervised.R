# Supervised layouts: the data's affinities mixed with a graph of labels or
# target values (`y` of neighbor_embedding()), as uwot and umap-learn mix
# them. neighbor_embedding() checks the arguments (check_target(), then
# check_target_rows() once the number of points is known) and passes the
# affinities it made through supervise_affinities() before anything reads
# them, so that the spectral start, the layout and `ret_extra` all see the
# mixed graph.

#' @name neighbor_embedding
#' @rdname neighbor_embedding
#' @section Supervised layouts:
#' With `y`, the affinities of t-SNE, LargeVis, UMAP and t-UMAP are mixed
#' with the labels' or target values' own graph before the layout, as
#' `uwot::umap(y = )` and umap-learn mix them, and the layout (its start,
#' its iterations) runs on the mixed graph, which `ret_extra = "P"` (or
#' `"fgraph"`, or `TRUE`) returns.
#'
#' *Labels* (a factor): an edge between two points of different labels is
#' multiplied by \eqn{\exp(-2.5 / (1 - w))}{exp(-2.5 / (1 - w))} for
#' `target_weight` \eqn{w} (0 at \eqn{w = 1}: such edges are removed), an
#' edge with an unlabelled end (`NA`) by \eqn{\exp(-1)}{exp(-1)}, and one
#' between two points of the same label is kept.
#'
#' *Numeric targets* (a vector, or a matrix whose rows are the targets):
#' the target graph is the UMAP graph ([umap_affinities()]) of the
#' `target_n_neighbors` nearest targets of each point (itself included) in
#' `target_metric`, among the points whose target has no `NA`. Each edge
#' of either graph takes the value
#' \eqn{l\, r^{w / (1 - w)}}{l * r^(w / (1 - w))} for \eqn{w < 0.5} and
#' \eqn{r\, l^{(1 - w) / w}}{r * l^((1 - w) / w)} otherwise, where \eqn{l} is
#' its affinity in the data's graph and \eqn{r} in the target graph (an
#' edge absent from a graph counts as half that graph's smallest value, at
#' least 1e-8, and an edge with an unlabelled end as \eqn{r = \exp(-1)}{r =
#' exp(-1)}, the value of an unlabelled edge above).
#'
#' For UMAP and t-UMAP the mixed graph is then made a fuzzy graph again as
#' uwot and umap-learn do ("reset local connectivity"): each point's
#' memberships are divided by its largest, and the result symmetrised by the
#' fuzzy union \eqn{a + b - ab}{a + b - a b}. So even a factor of one level,
#' which changes no edge, gives a somewhat different graph than no labels.
#' For t-SNE and LargeVis, whose affinities sum to 1, the same mixing is
#' applied to the symmetric P, which is then scaled to sum to 1 again (no
#' reset: each point's total affinity is kept as the mixing leaves it).
#'
#' `target_weight = 0` lays out the data's graph alone, unchanged (uwot's
#' formulas above would still weaken edges between different labels at
#' \eqn{w = 0}), and so do labels that are all `NA`: the layout is then
#' the unsupervised one, bit for bit. New points are placed by
#' [neighbor_embedding_transform()] without labels, among the supervised
#' layout's points, by their neighbours in the data. PaCMAP and LocalMAP
#' refuse `y`: their near, mid-near and further pairs are unweighted pairs
#' of a fixed number per point, with no affinity graph to mix labels into
#' (filtering or reweighting pairs by label would be another method).
#' @param y Labels or targets of the points, for a supervised layout (see
#'   "Supervised layouts"; t-SNE, LargeVis, UMAP and t-UMAP): a factor
#'   (`NA` for an unlabelled point; a character vector is taken as the
#'   factor of its values), or a numeric vector or matrix (a row with an
#'   `NA` for an unlabelled point), with one element or row per point.
#'   `NULL` (the default) for an unsupervised layout.
#' @param target_weight How much the labels count, from 0 (the data's graph
#'   alone) to 1 (the labels' graph as far as uwot's mixing goes); 0.5 by
#'   default, as in uwot.
#' @param target_n_neighbors For numeric `y`: the neighbours of each point's
#'   target (itself included) in the target graph; `NULL` for `n_neighbors`
#'   (15 by default). At most the number of labelled points are used.
#' @param target_metric For numeric `y`: the distance between targets,
#'   `"euclidean"` (the default), `"cosine"`, `"correlation"` or
#'   `"manhattan"`.
NULL

# The metrics of numeric targets (of the searches; not "hamming", which
# reads 0/1 data).
target_metrics <- c("euclidean", "cosine", "correlation", "manhattan")

# The checked target of neighbor_embedding(): NULL without `y`, else
# list(kind = "categorical", labels = integer codes with NA) or
# list(kind = "numeric", values = a double matrix, NA rows unlabelled), with
# the mixing settings (weight, n_neighbors, metric). Its length is checked
# against the points by check_target_rows().
check_target <- function(y, target_weight, target_n_neighbors, target_metric, method,
                         n_neighbors) {
  weight <- check_number(target_weight, "target_weight", min = 0, max = 1)
  k <- if (is.null(target_n_neighbors)) n_neighbors else
    check_whole(target_n_neighbors, "target_n_neighbors", min = 2)
  metric <- check_choice(target_metric, "target_metric", target_metrics)
  if (is.null(y)) return(NULL)
  if (method %in% c("pacmap", "localmap")) {
    stop_arg("'y' is not available for method = \"", method, "\": its near, mid-near and ",
             "further pairs carry no affinities to mix labels into (see \"Supervised ",
             "layouts\" in ?neighbor_embedding); use \"umap\", \"tumap\", \"largevis\" ",
             "or \"tsne\"")
  }
  settings <- list(weight = weight, n_neighbors = if (is.null(k)) 15L else as.integer(k),
                   metric = metric)
  if (is.character(y) && is.null(dim(y))) y <- factor(y)
  if (is.factor(y)) {
    return(c(list(kind = "categorical", labels = as.integer(y)), settings))
  }
  numeric_like <- (is.numeric(y) && !is.object(y)) && (is.null(dim(y)) || is.matrix(y))
  if (!numeric_like) {
    stop_arg("'y' must be a factor (NA for unlabelled points), a character vector, or a ",
             "numeric vector or matrix (it is ", what_is(y), ")")
  }
  values <- if (is.matrix(y)) unname(y) else matrix(as.vector(y), ncol = 1)
  storage.mode(values) <- "double"
  if (ncol(values) == 0) stop_arg("'y' has no columns")
  if (any(is.infinite(values))) {
    stop_arg("'y' has infinite values (NA marks an unlabelled point)")
  }
  c(list(kind = "numeric", values = values, by_row = is.matrix(y)), settings)
}

# The target's elements or rows must be one per point.
check_target_rows <- function(target, n) {
  if (is.null(target)) return(invisible(NULL))
  m <- if (target$kind == "categorical") length(target$labels) else nrow(target$values)
  if (m != n) {
    stop_arg("'y' must have one ", if (isTRUE(target$by_row)) "row" else "element",
             " per point, ", n, " (it has ", m, ")")
  }
  invisible(target)
}

# The affinities `P` (a dgCMatrix, symmetric: those of ne_affinities())
# mixed with the target's graph for `method`: a fuzzy graph again for UMAP
# and t-UMAP, scaled to sum to 1 for t-SNE and LargeVis. `P` itself when
# there is nothing to mix (no target, a weight of 0, no labelled point).
# The targets' search (numeric targets) runs from `seed`.
supervise_affinities <- function(P, target, method, n_threads, verbose, seed) {
  if (is.null(target) || target$weight == 0) return(P)
  unlabelled <- if (target$kind == "categorical") is.na(target$labels) else
    rowSums(is.na(target$values)) > 0
  if (all(unlabelled)) return(P)
  ne_msg(verbose, "neighbor_embedding: mixing in the ",
         if (target$kind == "categorical") "labels" else "targets",
         " (target_weight ", target$weight, ")")
  if (!methods::is(P, "dgCMatrix")) P <- methods::as(methods::as(P, "CsparseMatrix"), "generalMatrix")
  mixed <- if (target$kind == "categorical") {
    target_categorical(P, target$labels, target$weight)
  } else {
    right <- target_graph(target$values, unlabelled, target$n_neighbors, target$metric,
                          n_threads, verbose, seed)
    target_intersection(P, right, unlabelled, target$weight)
  }
  if (length(mixed@x) == 0) {
    stop_arg("'y' leaves no affinities: every edge joins points of different labels, which ",
             "target_weight = 1 removes (lower 'target_weight')")
  }
  if (method %in% c("umap", "tumap")) {
    mixed <- target_reset(mixed)
  } else {
    mixed@x <- mixed@x / sum(mixed@x)
  }
  mixed
}

# The columns (1-based) of a dgCMatrix's entries, in the order of its x.
entry_columns <- function(M) rep.int(seq_len(ncol(M)), diff(M@p))

# Labels mixed into P edge by edge: kept between equal labels, times
# exp(-1) with an unlabelled end, times exp(-far) between different ones,
# where far = 2.5 / (1 - weight) grows without bound as the weight nears 1.
# The factor of an edge is that of its mirror, so P stays symmetric.
target_categorical <- function(P, labels, weight) {
  far <- if (weight < 1) 2.5 / (1 - weight) else Inf
  li <- labels[P@i + 1L]
  lj <- labels[entry_columns(P)]
  unknown <- is.na(li) | is.na(lj)
  scale <- rep(1, length(li))
  scale[unknown] <- exp(-1)
  scale[!unknown & li != lj] <- exp(-far)
  P@x <- P@x * scale
  Matrix::drop0(P)
}

# The UMAP graph of the labelled targets, as an n x n dgCMatrix (no edge at
# an unlabelled point): each labelled point's k nearest labelled targets
# (itself included; all of them when fewer).
target_graph <- function(values, unlabelled, k, metric, n_threads, verbose, seed) {
  n <- nrow(values)
  rows <- which(!unlabelled)
  m <- length(rows)
  if (m < 2) return(ne_dgc(n, integer(n + 1), integer(0), numeric(0)))
  k <- min(k, m)
  data <- prepare_data(values[rows, , drop = FALSE], metric)
  kind <- search_kind(m, data, k, metric, n_threads)
  ne_msg(verbose, "neighbor_embedding: ", kind, " ", k - 1L, "-nearest neighbours of the targets")
  graph <- search_knn(data, k, metric, kind, n_threads, verbose, seed = seed)
  V <- umap_of_graph(graph, n_threads = n_threads)$V
  # (rows increase, so the entries stay in column order)
  Matrix::sparseMatrix(i = rows[V@i + 1L], j = rows[entry_columns(V)], x = V@x,
                       dims = c(n, n), repr = "C")
}

# The general fuzzy intersection of two symmetric graphs over the union of
# their edges, with the target graph `right` weighted by `weight`: an edge
# absent from a graph counts as half of that graph's smallest value (at
# least 1e-8), and the target value of an edge with an unlabelled end is
# exp(-1), as for labels. O(edges): the edges are matched by their
# position keys in the union, which both graphs' orders follow.
target_intersection <- function(left, right, unlabelled, weight) {
  n <- nrow(left)
  floor_of <- function(x) if (length(x) == 0) 1e-8 else max(min(x) / 2, 1e-8)
  left_min <- floor_of(left@x)
  right_min <- floor_of(right@x)
  union <- left + right
  key <- function(M) (entry_columns(M) - 1) * n + M@i
  union_key <- key(union)
  l <- rep(left_min, length(union_key))
  l[match(key(left), union_key)] <- left@x
  r <- rep(right_min, length(union_key))
  if (length(right@x) > 0) r[match(key(right), union_key)] <- right@x
  r[unlabelled[union@i + 1L] | unlabelled[entry_columns(union)]] <- exp(-1)
  union@x <- if (weight < 0.5) l * r^(weight / (1 - weight)) else r * l^((1 - weight) / weight)
  Matrix::drop0(union)
}

# A mixed graph made a fuzzy graph again, as UMAP's "reset local
# connectivity": every point's memberships divided by its largest (so that
# each point is sure of one neighbour), then the fuzzy union with the
# transpose, a + b - a b, which is symmetric to the last bit.
target_reset <- function(V) {
  col <- entry_columns(V)
  # (the last entry of each column in the order of column, then value)
  o <- order(col, V@x, method = "radix")
  ends <- V@p[-1][diff(V@p) > 0]
  col_max <- numeric(ncol(V))
  col_max[col[o[ends]]] <- V@x[o[ends]]
  V@x <- V@x / col_max[col]
  Vt <- Matrix::t(V)
  U <- V + Vt - V * Vt
  U <- Matrix::drop0(U)
  if (!methods::is(U, "dgCMatrix")) U <- methods::as(methods::as(U, "CsparseMatrix"), "generalMatrix")
  U
}
