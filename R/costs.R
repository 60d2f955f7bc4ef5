#' Embedding cost and its gradient
#'
#' Evaluates a neighbour embedding cost at the output coordinates `Y` for the
#' symmetric input affinities `P`, with its gradient over all pairs of points
#' (exactly: O(n^2) time, but O(nnz(P) + n d) memory, no n x n matrix is
#' formed; or approximately in O(n), see `gradient`).
#'
#' The costs, with \eqn{d_{ij}}{d_ij} the output distance and sums over
#' ordered pairs \eqn{i \ne j}{i != j}:
#'
#' * `"tsne"`: \eqn{\mathrm{KL}(P \Vert Q)}{KL(P || Q)}, \eqn{q_{ij} = w_{ij} / Z}{q_ij = w_ij / Z},
#'   \eqn{w = 1 / (1 + d^2)}, \eqn{Z = \sum w}{Z = sum(w)}; gradient
#'   \eqn{4 \sum_j (p_{ij} - w_{ij} / Z) w_{ij} (y_i - y_j)}{4 sum_j (p_ij - w_ij / Z)
#'   w_ij (y_i - y_j)} (the
#'   \eqn{w / Z} term is multiplied by \eqn{\sum P}{sum(P)} when P does not sum to 1).
#' * `"largevis"`: \eqn{-\sum p \log w - \gamma \sum \log(1 - w)}{-sum p log(w) - gamma
#'   sum log(1 - w)} with
#'   `weight = "cauchy"`: \eqn{w = 1 / (1 + \alpha d^2)}{w = 1 / (1 + alpha d^2)}, gradient
#'   \eqn{4 \sum_j (\alpha p_{ij} w_{ij} - \gamma w_{ij} / (d_{ij}^2 + \epsilon))
#'   (y_i - y_j)}{4 sum_j (alpha p_ij w_ij - gamma w_ij / (d_ij^2 + eps)) (y_i - y_j)};
#'   or `weight = "exp"`: \eqn{w = 1 / (1 + \exp(d^2))}{w = 1 / (1 + exp(d^2))},
#'   gradient \eqn{4 \sum_j ((1 - w_{ij}) p_{ij} - \gamma w_{ij}) (y_i - y_j)}{4 sum_j
#'   ((1 - w_ij) p_ij - gamma w_ij) (y_i - y_j)}.
#' * `"umap"`: the fuzzy cross-entropy
#'   \eqn{\sum v \log(v / w) + (1 - v) \log((1 - v) / (1 - w))}{sum v log(v / w) + (1 -
#'   v) log((1 - v) / (1 - w))}, constant terms
#'   included, \eqn{w = 1 / (1 + a d^{2b})}{w = 1 / (1 + a d^(2b))}; gradient
#'   \eqn{4 \sum_j (a b d_{ij}^{2(b-1)} w_{ij} v_{ij} - b (1 - v_{ij}) w_{ij} /
#'   (d_{ij}^2 + \epsilon)) (y_i - y_j)}{4 sum_j (a b d_ij^(2(b-1)) w_ij v_ij - b (1 -
#'   v_ij) w_ij / (d_ij^2 + eps)) (y_i - y_j)}.
#' * `"tumap"`: `"umap"` with \eqn{a = b = 1}.
#' * `"pacmap"`: a weighted sum over three sets of pairs (`P` is then
#'   `list(near, mid_near, further)`, n-row matrices of 1-based partners, as
#'   `neighbor_embedding(..., ret_extra = "pairs")` returns) of
#'   \eqn{t / (10 + t)}, \eqn{t / (10000 + t)} and \eqn{1 / (1 + t)},
#'   \eqn{t = 1 + d_{ij}^2}{t = 1 + d_ij^2}, with `weights` for the three
#'   sets; gradient \eqn{2 w L'(d_{ij}^2) (y_i - y_j)}{2 w L'(d_ij^2) (y_i -
#'   y_j)} for each point of each pair.
#' * `"localmap"`: `"pacmap"` with the near loss of LocalMAP's last phase,
#'   whose derivative is PaCMAP's times \eqn{c / \sqrt{t}}{c / sqrt(t)},
#'   `c = low_dist_thres / 2`:
#'   \eqn{c (\sqrt{t} / (10 + t) + \arctan(\sqrt{t / 10}) / \sqrt{10})}{c
#'   (sqrt(t) / (10 + t) + atan(sqrt(t / 10)) / sqrt(10))}.
#'
#' `eps = 0` gives the exact derivative of the cost for every method. The
#' defaults (`eps = NULL`) are those of the reference implementations: 0.1
#' for LargeVis and 0.001 for UMAP (t-SNE and LargeVis with `weight = "exp"`
#' have no singularity and ignore it). With `eps > 0` the reported cost
#' replaces \eqn{1 - w = u / (1 + u)} (\eqn{u = \alpha d^2}{u = alpha d^2} or \eqn{a
#' d^{2b}}{a d^(2b)})
#' by \eqn{(u + \epsilon) / (1 + u)}{(u + eps) / (1 + u)}, so that it stays finite when
#' two points
#' coincide.
#'
#' @param Y The output coordinates, an n x d numeric matrix.
#' @param P Symmetric input affinities, n x n: a dense matrix or a sparse
#'   `Matrix` (zeros need not be stored). The diagonal is ignored. It is
#'   checked (finite, non-negative, symmetric to a relative 100 machine
#'   epsilons entry by entry; an error names the first entry that is not) in
#'   the same pass over its stored entries that sums them, and a `dgCMatrix`
#'   is read where it is, without a copy: a call costs about one
#'   evaluation, also in loops.
#'   For `"pacmap"` and `"localmap"`, the pair sets (see above).
#' @param method One of `"tsne"`, `"largevis"`, `"umap"`, `"tumap"`,
#'   `"pacmap"`, `"localmap"`.
#' @param gamma LargeVis's weight of the repulsions.
#' @param eps The amount added to \eqn{d^2} in the singular repulsive term (see
#'   above); `NULL` for the method's default.
#' @param a,b UMAP's curve parameters; `NULL` for `umap_ab(spread, min_dist)`.
#'   For `"tumap"` they are 1.
#' @param weight LargeVis's output weight, `"cauchy"` or `"exp"`.
#' @param alpha The scale of LargeVis's Cauchy weight.
#' @param spread,min_dist Passed to [umap_ab()] when `a` and `b` are `NULL`.
#' @param n_threads Number of threads, capped at what the machine can run
#'   (`RcppParallel::defaultNumThreads()`); `NULL` (the default) for
#'   [default_n_threads()]: every core R may use. Results do not depend on it.
#' @param gradient `"exact"` (the default) sums every pair. `"approx"`, in 1
#'   or 2 dimensions (other dimensions take the exact sum), sums the
#'   all-pairs part in O(n) for every method: the layout is cut into equal
#'   boxes, each with a few Lagrange interpolation nodes per dimension; the
#'   pairs of points in neighbouring boxes (the near field) are summed
#'   directly, exactly; the others by FFT convolution on the node grid,
#'   interpolated back to the points. Boxes are narrow enough for the
#'   kernels' length scale and chosen by cost (FFT work against near pairs),
#'   wider where the layout is wide, so that a grid never holds many more
#'   nodes than there are points. A layout of separate clusters is summed by
#'   components: a coarse grid (n/16 to n nodes) sums the pairs
#'   of points in different components, which are far apart, and each
#'   component's own pairs get a grid over that component alone (components
#'   of a few points, and a few outlying points, are summed directly). So the
#'   time of one evaluation is bounded by what grids over the clusters
#'   themselves cost, plus O(n): it grows with the number of points and their
#'   crowding, not with the layout's width or the distances between
#'   clusters. The relative gradient error is
#'   below 1e-3 for t-SNE and 1e-2 for the others, the cost within 1e-3 (the
#'   measurements are in `bench/README.md`). The attraction (and UMAP's
#'   \eqn{(1 - v)}{(1 - v)} correction of the repulsion) is summed exactly
#'   over the stored entries of `P`. The result does not depend on
#'   `n_threads`. [far_field_plan()] shows which grids a layout gets and
#'   why. `options(lsnn.grid = list(...))` changes the grid (for
#'   measurements), a named list of any of these fields (the others keep the
#'   method's default, and the grid is kept through early exaggeration):
#'   `nodes` (interpolation nodes per box and dimension, 1 to 32),
#'   `box_width` (the widest box, at least 0.05; `Inf`: the boxes follow the
#'   points), `min_boxes` (per dimension; nodes times min_boxes at most
#'   2,048), `near_field` (`TRUE`: the pairs of neighbouring boxes are summed
#'   exactly), `points_per_box` (0, or at least nodes^2 / 4: at least
#'   (n / points_per_box)^(1/d) boxes per dimension), `near_boxes` (the near
#'   field's depth, 1 to 8), `pair_weight` (the cost of a near pair against
#'   an FFT element-level; above 0 the grid's shape is chosen by cost),
#'   `smooth_width` and `shallow_width` (boxes up to this wide take no near
#'   field, and one box deep), `fine_nodes` and `fine_smooth_width` (the
#'   shapes with more nodes per box that the choice by cost may take),
#'   `by_components` (`FALSE`: one grid over the whole layout) and
#'   `memory_mb` (the far field's memory budget, 256 MB by default: the
#'   choice by cost takes only shapes that fit in it, and kernel spectra are
#'   kept for later iterations only within it). For example
#'   `list(nodes = 7, box_width = 0.5, min_boxes = 20, near_field = FALSE,
#'   pair_weight = 0, by_components = FALSE)` is a plain grid. Two more
#'   options, for measurements and tests, apply to the approximation here and
#'   in [neighbor_embedding()]: `options(lsnn.in_place_bytes = )` (a number of
#'   bytes, 256 MiB by default: a `P` larger than this, with no diagonal
#'   entries, is read in place rather than copied into the order the
#'   approximation reads it) and `options(lsnn.accurate_grid_points = )` (a
#'   number of points, 200,000 by default: t-SNE layouts of more points keep
#'   the early exaggeration's grid to the end).
#' @param weights PaCMAP's weights of the near, mid-near and further pairs
#'   (named, or in that order).
#' @param low_dist_thres LocalMAP's distance whose half scales its near loss.
#' @return A list with `cost`, `gradient` (n x d) and `pcost`, the per-point
#'   cost (summing to `cost`: each ordered pair's term counted for its first
#'   point; for PaCMAP each pair for the point of its row).
#' @examples
#' X <- as.matrix(iris[1:50, 1:4])
#' P <- perplexity_affinities(X, perplexity = 10)
#' Y <- prcomp(X)$x[, 1:2]
#' res <- cost_gradient(Y, P, method = "tsne")
#' res$cost
#' @export
cost_gradient <- function(Y, P, method = "tsne", gamma = 1, eps = NULL, a = NULL,
                          b = NULL, weight = "cauchy", alpha = 1, spread = 1,
                          min_dist = 0.1, n_threads = NULL,
                          gradient = c("exact", "approx"),
                          weights = c(near = 1, mid_near = 0, further = 1),
                          low_dist_thres = 10, density = NULL) {
  gradient <- choice_arg(gradient, c("exact", "approx"))
  Y <- check_coords(Y, "Y")
  n_threads <- check_n_threads(n_threads)
  method <- check_choice(method, "method",
                         c("tsne", "largevis", "umap", "tumap", "pacmap", "localmap"))
  if (missing(P)) {
    stop_arg("'P' is missing: give the input affinities (for method = \"pacmap\" or ",
             "\"localmap\", the pair sets of neighbor_embedding(..., ret_extra = \"pairs\"))")
  }
  if (method %in% c("pacmap", "localmap")) {
    return(pacmap_cost_gradient(Y, P, method, weights, low_dist_thres, n_threads))
  }
  P <- affinity_matrix(P, "P", nrow(Y))
  cost <- ne_cost_settings(method, gamma = gamma, eps = eps, a = a, b = b, weight = weight,
                           alpha = alpha, spread = spread, min_dist = min_dist)
  # (P's entries are checked as read_affinities() checks them, in the pass
  # that sums them, read in place when P is a dgCMatrix)
  cost <- ne_cost_list(cost, gradient)
  cost$density <- dens_cost_gradient_entry(density, nrow(Y), method)
  res <- .cost_gradient(Y, P, cost, n_threads, simd_option(), affinity_tol)
  if (res$check[1] != 0) affinity_problem(res$check, "P", dim(P), affinity_tol)
  res$check <- NULL
  dimnames(res$gradient) <- dimnames(Y)
  res
}

#' The far field's plan for a layout
#'
#' Which grids `cost_gradient(..., gradient = "approx")` lays over a
#' layout, and why: the regions the layout is split into (a sparse halo
#' shed around dense clusters, a few outlying points peeled off, separate
#' components) and, for each region summed by one grid, that grid's shape
#' (nodes per box, boxes and their width, near field), with the numbers
#' each decision compared. Only the plan is made: no FFT is run.
#' `neighbor_embedding(verbose = TRUE)` prints the same description at its
#' first evaluation and when the grid settings change (after early
#' exaggeration). The plan follows `options(lsnn.grid)`.
#'
#' During a run the grids may also take boxes a step or two wider on the
#' ladder of box widths, to reuse the kernel spectra of an earlier
#' evaluation; this plan is that of a first evaluation.
#'
#' @param Y The layout: a numeric matrix of 1 or 2 columns.
#' @param method `"tsne"`, `"largevis"`, `"umap"` or `"tumap"`.
#' @param weight LargeVis's output weight, `"cauchy"` or `"exp"`.
#' @param exaggerated `TRUE` for the grid t-SNE's optimisation takes during
#'   early exaggeration, and to the end on layouts of more than 200,000
#'   points (unless `options(lsnn.grid)` sets one).
#' @param n_threads Number of threads; `NULL` (the default) for
#'   [default_n_threads()].
#' @return An object of class `lsnn_far_field_plan`: a list with `text`, the
#'   description (one paragraph per region, in the order the regions run),
#'   and `regions`, a data frame with a row per region: `region` (its name,
#'   "1.2" for the second child of region 1), `parent` (row), `kind`
#'   (`"grid"`, `"shed"`, `"peel"` or `"components"`), `points`, `depth`
#'   and `peels` (component levels and sheds or peels above it), and the
#'   shape of its grid (for the other kinds, their coarse grid): `nodes` per
#'   box, `boxes_x`, `boxes_y`, `width_x`, `width_y`, `near_boxes` (the near
#'   field's depth, 0 for none), and `why` a grid region is not split.
#' @examples
#' set.seed(1)
#' Y <- rbind(matrix(rnorm(4000), ncol = 2), matrix(rnorm(40, 500), ncol = 2))
#' far_field_plan(Y)
#' @export
far_field_plan <- function(Y, method = "tsne", weight = "cauchy", exaggerated = FALSE,
                           n_threads = NULL) {
  Y <- check_coords(Y, "Y")
  if (ncol(Y) > 2) stop_arg("'Y' must have 1 or 2 columns (it has ", ncol(Y), ")")
  exaggerated <- check_flag(exaggerated, "exaggerated")
  n_threads <- check_n_threads(n_threads)
  cost <- ne_cost_settings(method, weight = weight)
  res <- .far_field_plan(Y, ne_cost_list(cost, "approx"), exaggerated, n_threads)
  structure(list(text = strsplit(res$text, "\n")[[1]], regions = res$regions),
            class = "lsnn_far_field_plan")
}

#' @method print lsnn_far_field_plan
#' @export
print.lsnn_far_field_plan <- function(x, ...) {
  cat(x$text, sep = "\n")
  invisible(x)
}

# The cost's settings as the core takes them: the method's parameters, how
# the all-pairs part is summed ("exact" or "approx") and the grid option.
ne_cost_list <- function(cost, gradient) {
  # (options(lsnn.in_place_bytes) and options(lsnn.accurate_grid_points),
  # documented in ?cost_gradient, mostly for the tests of those paths; NULL
  # keeps the core's defaults)
  c(cost, list(gradient = gradient), list(grid = ne_grid_option(cost$method)),
    list(in_place_bytes = number_option("lsnn.in_place_bytes", NULL, help = "cost_gradient"),
         accurate_grid_points = number_option("lsnn.accurate_grid_points", NULL,
                                              help = "cost_gradient")))
}

# A choice argument such as `gradient` or `method`: its first choice when left
# at the default vector, else one of the choices (the error names the
# argument).
choice_arg <- function(x, choices, name = "gradient") {
  if (identical(x, choices)) return(choices[1])
  check_choice(x, name, choices)
}

# The core's settings for a method: method (the core's cost: "largevis_exp"
# for LargeVis with exp weights, "umap" for t-UMAP), gamma, alpha, a, b, eps,
# with the defaults documented in cost_gradient().
ne_cost_settings <- function(method, gamma = 1, eps = NULL, a = NULL, b = NULL,
                             weight = "cauchy", alpha = 1, spread = 1, min_dist = 0.1) {
  method <- check_choice(method, "method", c("tsne", "largevis", "umap", "tumap"))
  gamma <- check_number(gamma, "gamma", min = 0)
  alpha <- check_number(alpha, "alpha", min = 0, above = TRUE)
  if (!is.null(eps)) eps <- check_number(eps, "eps", min = 0)
  # checked whenever given, even where the method does not use them
  if (!is.null(a)) a <- check_number(a, "a", min = 0, above = TRUE)
  if (!is.null(b)) b <- check_number(b, "b", min = 0, above = TRUE)
  weight <- check_choice(weight, "weight", c("cauchy", "exp"))
  kind <- method
  if (method == "largevis") {
    kind <- if (weight == "exp") "largevis_exp" else "largevis"
    if (is.null(eps)) eps <- 0.1
  }
  if (method %in% c("umap", "tumap")) {
    kind <- "umap"
    if (is.null(eps)) eps <- 0.001
    if (method == "tumap") {
      a <- 1
      b <- 1
    } else if (is.null(a) || is.null(b)) {
      ab <- umap_ab(spread, min_dist)
      if (is.null(a)) a <- ab[["a"]]
      if (is.null(b)) b <- ab[["b"]]
    }
  }
  if (is.null(eps)) eps <- 0
  if (is.null(a)) a <- 1
  if (is.null(b)) b <- 1
  list(method = kind, gamma = gamma, alpha = alpha, a = a, b = b, eps = eps)
}
