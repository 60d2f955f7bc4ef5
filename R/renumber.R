# PaCMAP's and LocalMAP's layouts from a number of points on run in an order
# of the points that keeps neighbours near in memory
# (inst/include/lsnn/graph/renumber.h: a breadth-first walk of the near
# graph), and return their rows in the user's order. Below it nothing is
# renumbered, so those layouts are as before. The internal option
# lsnn.renumber (for measurements and tests): FALSE never renumbers, TRUE
# always, a number sets that number of points.

# The fewest points a layout is renumbered at: none by default. Up to 5e5
# points (bench/bench-renumber.R) the steps are no faster renumbered: the
# near pairs, which the order brings together, are under a third of the
# pairs, and the further and mid-near pairs are random whatever the order.
# At 1e6 points and more, where a pair costs more, it is to be measured
# before it is turned on.
renumber_min_points <- Inf

renumber_threshold <- function() {
  opt <- getOption("lsnn.renumber")
  if (is.null(opt)) return(renumber_min_points)
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

# The layout settings with the callback shown the rows in the user's order
# while the layout runs in `order`.
renumbered_callback <- function(layout, order) {
  if (is.null(order) || is.null(layout$callback)) return(layout)
  shown <- layout$callback
  rank <- integer(length(order))
  rank[order] <- seq_along(order)
  layout$callback <- function(iteration, Y) shown(iteration, Y[rank, , drop = FALSE])
  layout
}
