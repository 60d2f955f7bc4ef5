# Large layouts run in an order of the points that keeps neighbours near in
# memory (inst/include/lsnn/graph/renumber.h: a breadth-first walk of the
# graph), and return their rows in the user's order: PaCMAP's and LocalMAP's
# (over the near graph) and the sampled layouts of UMAP, t-UMAP and
# LargeVis (over the affinities), each from a number of points on. Below it
# nothing is renumbered. The internal option lsnn.renumber (for
# measurements and tests): FALSE never renumbers, TRUE always, a number sets
# that number of points for every layout.

# The fewest points a PaCMAP layout is renumbered at: none by default. Up to
# 1e6 points (bench/bench-renumber.R) its steps are no faster renumbered:
# the near pairs, which the order brings together, are under a third of the
# pairs, and the further and mid-near pairs are random whatever the order.
renumber_min_points <- Inf

# The fewest points a sampled layout is renumbered at: the density term
# (densMAP) reads every edge's partner each epoch and the steps read an
# edge's two ends, and from Fashion-MNIST's size on both were faster
# renumbered, densMAP by far the most (bench/README.md, "Layouts in a
# breadth-first order").
sampled_renumber_min_points <- 5e4

renumber_threshold <- function(default = renumber_min_points) {
  opt <- getOption("lsnn.renumber")
  if (is.null(opt)) return(default)
  if (isFALSE(opt)) return(Inf)
  if (isTRUE(opt)) return(0)
  if (!is.numeric(opt) || length(opt) != 1 || is.na(opt) || opt < 0) {
    stop("option 'lsnn.renumber' must be TRUE, FALSE or a number of points", call. = FALSE)
  }
  opt
}

# The new order of n points (1-based, the points in their new order) from
# the neighbour lists in columns from + 1 to from + k of the integer matrix
# idx, or NULL when the layout is too small to gain from one.
layout_order <- function(idx, from, k, n) {
  if (n < renumber_threshold() || k < 1) return(NULL)
  .neighbour_order(idx, from, k)
}

# The affinities P of a sampled layout of n points renumbered (rows and
# columns) in the breadth-first order of their entries, as list(order =
# the points in their new order, P), or NULL when the layout is too small
# to gain from it.
affinities_in_layout_order <- function(P, n) {
  if (n < renumber_threshold(sampled_renumber_min_points)) return(NULL)
  r <- .renumber_affinities(P)
  list(order = r$order, P = methods::new("dgCMatrix", Dim = P@Dim, p = r$p, i = r$i, x = r$x))
}

# The positions of the points in `order` (the inverse permutation).
order_rank <- function(order) {
  rank <- integer(length(order))
  rank[order] <- seq_along(order)
  rank
}

# The layout settings (ne_layout_settings()) with the callback shown the
# rows in the user's order, and named in it, while the layout runs in
# `order`.
renumbered_callback <- function(layout, order) {
  if (is.null(order) || is.null(layout$callback)) return(layout)
  shown <- layout$callback
  rank <- order_rank(order)
  layout$callback <- function(iteration, Y) shown(iteration, Y[rank, , drop = FALSE])
  layout
}
