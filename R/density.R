# densMAP and den-SNE: neighbor_embedding(densmap = TRUE) and the density
# term of cost_gradient(). The term itself is the core's (embed/density.h);
# here are its arguments, the data's radii and the results.

#' @rdname neighbor_embedding
#' @param densmap `TRUE` to keep each point's local density: densMAP for
#'   `method = "umap"` and `"tumap"`, den-SNE for `"tsne"` (Narayan, Berger
#'   and Cho, Nature Biotechnology 2021); an error for the other methods, and
#'   for affinities given as `P` (the term needs the data's distances). It
#'   switches the term on; `dens_lambda`, `dens_frac` and `dens_var_shift`
#'   are read only then (`dens_lambda = 0` gives the plain layout, bit for
#'   bit). See the section "Density (densMAP, den-SNE)".
#' @param dens_lambda The weight of the density term, at least 0; `NULL`
#'   (the default) takes the reference implementations' defaults: 2 for UMAP
#'   and t-UMAP (umap-learn's densMAP), 0.1 for t-SNE (densvis' den-SNE).
#' @param dens_frac The share of the iterations (epochs for `"sampled"`) at
#'   the end of the run that take the density term: the term is on from
#'   iteration `floor((1 - dens_frac) * max_iter) + 1` (umap-learn's rule);
#'   in (0, 1] (default 0.3).
#' @param dens_var_shift Added to the variance of the layout's log radii in
#'   the correlation (umap-learn's regulariser), at least 0 (default 0.1).
#' @section Density (densMAP, den-SNE):
#' With `densmap = TRUE` the cost gains a term that keeps each point's local
#' radius. Over the entries of the symmetric affinities P (the graph's
#' edges), point i's radius in the data is
#' \eqn{R_i = \sum_j p_{ij} |x_i - x_j|^2 / \sum_j p_{ij}}{R_i = sum_j p_ij |x_i - x_j|^2 / sum_j p_ij}
#' (the distances of the neighbour graph) and in the layout
#' \eqn{S_i = \sum_j w_{ij} |y_i - y_j|^2 / \sum_j w_{ij}}{S_i = sum_j w_ij |y_i - y_j|^2 / sum_j w_ij},
#' \eqn{w = 1 / (1 + a d^{2b})}{w = 1 / (1 + a d^(2b))} (t-SNE and t-UMAP:
#' \eqn{a = b = 1}). Their log radii, \eqn{\log(10^{-8} + R_i)}{log(1e-8 + R_i)}
#' and \eqn{\log(10^{-8} + S_i)}{log(1e-8 + S_i)}, are compared by their
#' correlation `corr`: the mean of the products of the standardised data log
#' radii with the centred layout log radii, over
#' `sqrt(variance + dens_var_shift)` of the layout's (Pearson's correlation
#' when `dens_var_shift = 0`). The term added to the cost is
#' `-dens_lambda * W * corr`, weighed against the method's cost as the
#' reference implementations weigh it, so that `dens_lambda` means what it
#' means there: for UMAP and t-UMAP `W = 2 * sum(P)` (umap-learn's densMAP,
#' whose cross-entropy counts each edge once where lsnn's counts it from both
#' ends), for t-SNE `W = 2` (densvis' den-SNE, whose P sums to 1). It is on
#' from iteration `floor((1 - dens_frac) * max_iter) + 1` on, with its exact
#' gradient, in O(edges) per iteration whatever the gradient (`"exact"`,
#' `"approx"` or `"sampled"`; under `"sampled"`, each epoch adds the term's
#' gradient at the scale at which the samples follow the cost, each edge's
#' part clipped as a sample is). umap-learn's densMAP also runs 200 epochs
#' more than its UMAP, which gives the term room to move the points; lsnn
#' keeps UMAP's epochs and raises the learning rate instead: `eta = 6` by
#' default under `"sampled"` when `dens_lambda > 0` (the layout is then
#' wider than UMAP's, as umap-learn's densMAP is). The means and
#' variances are sums in a fixed order, so the layout stays independent of
#' the number of threads. A gradient-descent run is not stopped by `tol`
#' before the term has started. `ret_extra = "radii"` returns
#' `radii = list(data, layout)`, the log radii of every point in the data
#' and in the final layout (as umap-learn's `output_dens` returns
#' `rad_orig` and `rad_emb`, but the layout's over the same edges as the
#' optimised term, not over a new graph of the layout); it needs no
#' `densmap`. A model of a densMAP or den-SNE layout places new points by the
#' method's own cost: `neighbor_embedding_transform()` does not apply the
#' density term.
#' @examples
#' # densMAP: clusters keep their relative spread
#' Xd <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' dm <- neighbor_embedding(Xd, "umap", densmap = TRUE, ret_extra = "radii", max_iter = 200)
#' cor(dm$radii$data, dm$radii$layout)
#' @name neighbor_embedding
NULL

# The density settings of neighbor_embedding(): NULL when the term is off,
# else list(lambda, frac, var_shift). The numbers are checked whenever given.
dens_settings <- function(densmap, dens_lambda, dens_frac, dens_var_shift, method) {
  densmap <- check_flag(densmap, "densmap")
  if (!is.null(dens_lambda)) dens_lambda <- check_number(dens_lambda, "dens_lambda", min = 0)
  dens_frac <- check_number(dens_frac, "dens_frac", min = 0, max = 1, above = TRUE)
  dens_var_shift <- check_number(dens_var_shift, "dens_var_shift", min = 0)
  if (!densmap) return(NULL)
  if (!method %in% c("umap", "tumap", "tsne")) {
    stop_arg("'densmap' = TRUE is for method = \"umap\", \"tumap\" (densMAP) and \"tsne\" ",
             "(den-SNE), not \"", method, "\"")
  }
  if (is.null(dens_lambda)) dens_lambda <- dens_default_lambda(method)
  list(lambda = dens_lambda, frac = dens_frac, var_shift = dens_var_shift)
}

# The default weight of the density term: the reference implementations'
# (umap-learn's densMAP 2; densvis' den-SNE 0.1).
dens_default_lambda <- function(method) if (method == "tsne") 0.1 else 2

# Whether the run needs the data's radii (the density term, or
# ret_extra = "radii"); an error when the data's distances are not known
# (affinities given as P), or for LargeVis (whose kernel the radii do not
# take).
dens_radii_wanted <- function(dens, ret_extra, inputs, method) {
  wanted <- !is.null(dens) || (is.character(ret_extra) && "radii" %in% ret_extra)
  if (wanted && !method %in% c("umap", "tumap", "tsne")) {
    stop_arg("'ret_extra' = \"radii\" is for method = \"umap\", \"tumap\" and \"tsne\", ",
             "not \"", method, "\"")
  }
  if (wanted && !is.null(inputs$P)) {
    stop_arg(if (!is.null(dens)) "'densmap' = TRUE" else "'ret_extra' = \"radii\"",
             " needs the data's distances: give 'X' or 'nn_method' rather than 'P'")
  }
  wanted
}

# The data's log radii, log(1e-8 + R_i), over the entries of P (a symmetric
# dgCMatrix): from the distances of the graph P was made from, or (the
# all-pairs affinities of at most 1,000 rows, made without a graph) from
# the data's euclidean distances.
dens_data_radii <- function(P, graph, inputs, n_threads) {
  if (!is.null(graph)) {
    idx <- graph$idx
    if (!is.integer(idx)) storage.mode(idx) <- "integer"
    dist <- graph$dist
    if (!is.double(dist)) storage.mode(dist) <- "double"
    radii <- .density_data_radii(P, idx, dist, n_threads)
    if (anyNA(radii)) stop("internal: a pair of the affinities is not in the graph", call. = FALSE)
    return(radii)
  }
  sq <- as.matrix(stats::dist(dense_data(inputs$data)))^2
  dens_log_radii(P, sq)
}

# log(1e-8 + sum_j p_ij d_ij / sum_j p_ij) by rows of the affinities P (any
# matrix) and the squared distances `sq` (n x n), the diagonal left out; a
# row without affinities has the radius 0.
dens_log_radii <- function(P, sq) {
  P <- as.matrix(P)
  diag(P) <- 0
  den <- rowSums(P)
  num <- rowSums(P * sq)
  log(1e-8 + ifelse(den > 0, num / den, 0))
}

# The core's density entry of the cost list (density_settings() of
# src/costs.cpp) for a run of `max_iter` steps, or NULL; `verbose` says
# where the term starts.
dens_cost_entry <- function(dens, data_radii, max_iter, verbose = FALSE) {
  if (is.null(dens)) return(NULL)
  start <- as.integer(floor((1 - dens$frac) * max_iter) + 1)
  ne_msg(verbose, "neighbor_embedding: density term (dens_lambda ", signif(dens$lambda, 4),
         ") from iteration ", start, " of ", max_iter)
  list(lambda = dens$lambda, var_shift = dens$var_shift, start = start,
       data_radii = as.double(data_radii))
}

# ret_extra = "radii": the data's and the layout's log radii.
dens_radii_result <- function(data_radii, Y, P, cost, n_threads) {
  names(data_radii) <- rownames(Y)
  layout <- .density_layout_radii(unname(Y), P, cost$a, cost$b, n_threads)
  names(layout) <- rownames(Y)
  list(data = data_radii, layout = layout)
}

#' @rdname cost_gradient
#' @param density `NULL`, or the density term of densMAP and den-SNE to add
#'   (see `?neighbor_embedding`, section "Density (densMAP, den-SNE)"; `method` `"umap"`,
#'   `"tumap"` or `"tsne"`): a list with `data_radii`, the data's log radii
#'   (one per row of `Y`, as `neighbor_embedding(ret_extra = "radii")`
#'   returns them), and optionally `dens_lambda` (2 for UMAP and t-UMAP, 0.1
#'   for t-SNE) and `dens_var_shift` (0.1). The term, `-dens_lambda * W *
#'   corr` (`W = sum(P)` for UMAP and t-UMAP, 2 for t-SNE), is summed over P's
#'   entries with its exact gradient on both `gradient` paths; it is part of
#'   `cost` and `gradient`, not of `pcost`.
#' @name cost_gradient
NULL

# cost_gradient()'s `density` as the core's entry (the term on from the
# start), or NULL.
dens_cost_gradient_entry <- function(density, n, method) {
  if (is.null(density)) return(NULL)
  if (!is.list(density) || is.null(density$data_radii)) {
    stop_arg("'density' must be NULL or a list with 'data_radii' (and optionally ",
             "'dens_lambda', 'dens_var_shift')")
  }
  unknown <- setdiff(names(density), c("data_radii", "dens_lambda", "dens_var_shift"))
  if (length(unknown) > 0 || is.null(names(density)) || any(names(density) == "")) {
    stop_arg("'density' has elements other than 'data_radii', 'dens_lambda' and ",
             "'dens_var_shift'")
  }
  if (!method %in% c("umap", "tumap", "tsne")) {
    stop_arg("'density' is for method = \"umap\", \"tumap\" and \"tsne\", not \"", method, "\"")
  }
  radii <- density$data_radii
  if (!is.numeric(radii) || length(radii) != n || anyNA(radii) || any(!is.finite(radii))) {
    stop_arg("'density$data_radii' must be ", n, " finite numbers (one per row of 'Y')")
  }
  lambda <- check_number(if (is.null(density$dens_lambda)) dens_default_lambda(method)
                         else density$dens_lambda,
                         "density$dens_lambda", min = 0)
  shift <- check_number(if (is.null(density$dens_var_shift)) 0.1 else density$dens_var_shift,
                        "density$dens_var_shift", min = 0)
  list(lambda = lambda, var_shift = shift, start = 1L, data_radii = as.double(radii))
}
