#' Neighbour embedding by gradient descent: t-SNE, LargeVis, UMAP
#'
#' Embeds the rows of a data matrix, or the points of a neighbour graph, in
#' `n_components` dimensions by minimising the t-SNE, LargeVis or UMAP cost
#' (see [cost_gradient()]) with its gradient over all pairs of points, by
#' gradient descent with momentum and delta-bar-delta gains as in t-SNE; or,
#' for LargeVis, UMAP and t-UMAP above 10,000 points, by stochastic gradient
#' descent with negative sampling, as LargeVis and UMAP themselves do.
#'
#' **Gradient.** `gradient = "exact"` sums every pair (O(n^2) time per
#' iteration); `"approx"` sums the all-pairs (repulsive) part in O(n), by
#' interpolation on a grid and FFT convolution for the far pairs and a direct
#' sum over neighbouring boxes for the near ones (see [cost_gradient()]), for
#' every method in 1 or 2 dimensions (other dimensions use the exact sum).
#' `"sampled"` (LargeVis, UMAP and t-UMAP only) replaces the sum over all
#' pairs by negative sampling (see below).
#' `"auto"` (the default) takes the approximation in 1 or 2 dimensions above
#' 20,000 points for t-SNE, 2,000 for UMAP, 7,000 for t-UMAP and 5,000 for
#' LargeVis: where one exact and one approximate evaluation take about the
#' same time (the measurements are in `bench/README.md` of the source
#' repository); and `"sampled"` for LargeVis, UMAP and t-UMAP above 10,000
#' points. The approximate path reports
#' the cost from the same sums (t-SNE: the KL divergence with the
#' interpolated Z), within 1e-3 of the exact cost, so `verbose` and the early
#' stop work as before.
#'
#' **Input affinities.** For `"tsne"` and `"largevis"`,
#' [perplexity_affinities()]: over all pairs of points when `X` is a data
#' matrix of at most 1,000 rows, otherwise over an exact k-nearest neighbour
#' graph of `3 * perplexity` neighbours from [extended_knn()]. For `"umap"`
#' and `"tumap"`, [umap_affinities()] over an exact graph of `n_neighbors`
#' neighbours (the point itself included). Above 20,000 rows these graphs
#' come from lsnn's approximate search (`extended_knn(nn_kind = "approx")`),
#' whose cost grows about linearly where the exact search's grows as n^2. A
#' graph passed as `nn_method`
#' (such as the locally scaled neighbours of [locally_scaled_knn()]) is used
#' instead, and `X` may then be `NULL`, as in `uwot::umap()`.
#'
#' **Optimizer.** Each step computes the gradient, updates the gains (+0.2
#' where the gradient's sign differs from the last update's, x0.8 where it
#' agrees, at least `min_gain`), takes the step
#' `update <- momentum * update - eta * gains * gradient` and recentres the
#' coordinates. The momentum is `momentum` before iteration
#' `mom_switch_iter` and `final_momentum` after; the affinities are
#' multiplied by `exaggeration` up to iteration `stop_lying_iter`. The cost is
#' evaluated every `epoch` iterations (shown with `verbose = TRUE`); after the
#' exaggeration phase the run stops early when it changes by less than a
#' relative `tol` between two epochs. During the exaggeration the approximate
#' t-SNE gradient uses the coarser grid of FIt-SNE and openTSNE (3 nodes per
#' 1-unit box, no near field; a gradient error of a few per cent): the
#' exaggerated attraction dominates there, and the clusters are at their
#' densest, where the default grid's exact near field is dear (100,000
#' points in 20 clusters: 0.4 s per iteration instead of 1.7 s). The costs
#' shown during the exaggeration come from that grid.
#'
#' **Defaults by method.** `"tsne"`: `eta = n / 12`, `exaggeration = 12` up
#' to iteration 250. `"largevis"`: `gamma = 1 / (10 n)` (with P summing to 1
#' the repulsion must be about 1/n of t-SNE's: `gamma = 1` gives a uniform
#' disc), `eta = n / 20`, `exaggeration = 4` up to iteration 250,
#' `eps = 0.1`. `"umap"` and `"tumap"`: `eta = 0.03`, no exaggeration,
#' `eps = 0.001`, a and b from [umap_ab()] (1 for `"tumap"`). The initial
#' coordinates are scaled to a standard deviation of `init_sdev = 1e-4`.
#' How these were chosen is told in `bench/README.md` in the package's source.
#'
#' **The UMAP step size, measured.** On the LSNN-15 graph of the first 2,000
#' Fashion-MNIST images (exact gradient, spectral start, the same seed), the
#' UMAP cross-entropy (exact, over all pairs) after 500 and 1,000 iterations
#' was 25,549 and 23,823 with `eta = 0.003`, 24,118 and 23,495 with `0.01`
#' and 23,519 and 23,218 with `0.03`; 15-NN preservation 0.495-0.496 for all
#' three. At 3,000 images, 500 iterations: 41,262 with `0.01`, 40,364 with
#' `0.03`; larger steps were worse (88,008 with `0.1`, 191,561 with `1`, the
#' layout blown up to 1,000-13,000 units). The small start matters as much:
#' `init_sdev = 1e-2` instead of `1e-4` ended at 111,090 (2,000 images,
#' 1,000 iterations) and `init_sdev = 1` or `3` at 57,768-65,927 (3,000
#' images), with lower preservation. For comparison, `uwot::umap()` on the
#' same graph (500 epochs of negative sampling, whose effective repulsion is
#' much weaker than the cost's) reached 437,003 at 2,000 images and 953,211
#' at 3,000 under this cost, with 15-NN preservation 0.458 and 0.411 (lsnn
#' 0.496 and 0.454): uwot's compact layouts (about 16 units wide) are far
#' from the minimum of the cross-entropy over all pairs, which spreads the
#' points over 150-270 units. t-UMAP at 2,000 images, 500 iterations:
#' 23,167 with `eta = 0.01`, 22,743 with `0.03` (preservation 0.496, 0.499);
#' `uwot::tumap()` 367,056 (0.454). LargeVis (perplexity 30 on 90 exact
#' neighbours, the defaults above, 500 iterations): 3.356 against
#' `uwot::lvish()`'s 7.972 under lsnn's cost (preservation 0.513 and 0.446).
#'
#' **Negative sampling (`gradient = "sampled"`).** Above some ten thousand
#' points the repulsion over all pairs of these three costs outweighs the
#' attraction of the sparse affinities so much that their minimum spreads
#' the points evenly: on the LSNN-15 graph of all 70,000 Fashion-MNIST
#' images, 1,000 full-gradient UMAP iterations (114 s) gave a uniform disc
#' with 14-NN preservation 0.11, where `uwot::umap()` gives 0.17 and
#' separated classes. The issue is the cost, not the optimiser (its exact
#' value was 3.8e6 there, 100 times below uwot's layout's 3.6e8). So, as in
#' LargeVis and UMAP, each epoch samples every edge of P once per
#' `max(P) / p_ij` epochs; a sampled edge pulls its point towards its
#' neighbour (the gradient of `-log w`) and pushes it away from
#' `negative_sample_rate` points drawn at random, each with weight `gamma`
#' (the gradient of `-log(1 - w)`); every pair's push or pull is clipped to
#' 4 per coordinate. All points move together after each epoch, by an Adam
#' step (beta1 = 0.5, beta2 = 0.9) of a learning rate `eta` falling linearly
#' from 1 to 0 over `max_iter = 500` epochs. Defaults: `gamma = 1` (UMAP,
#' t-UMAP) or 7 (LargeVis), `init_sdev = 2`. `exaggeration`, the momentum,
#' gain and `tol` settings are not used. The cost reported is that of the
#' documented cost (with its own `gamma`), at the end (and from the start
#' every `epoch` epochs with `verbose = TRUE`). The random draws come from
#' a seed taken from R's generator, one stream per point and epoch, so the
#' result is the same for any `n_threads`. On all 70,000 Fashion-MNIST
#' images (2 threads) it took 29 s for UMAP where `uwot::umap()` took 50 s on
#' the same graph (t-UMAP 15 s against 26 s, LargeVis 20 s against 20 s),
#' with a lower cost and the same or higher 15-NN preservation.
#'
#' With `verbose = TRUE` the run reports the cost every `epoch` iterations
#' and says whether it converged or stopped at `max_iter`. A `max_iter` below
#' `stop_lying_iter` gives a warning, as the run would end during the early
#' exaggeration; coordinates that diverge (from a too large `eta` or
#' `exaggeration`) give an error.
#'
#' For large data sets these t-SNE defaults are those of the literature on
#' t-SNE at scale (Belkina et al. 2019; Linderman et al. 2019; Kobak and
#' Berens 2019): step size n / 12, exaggeration 12 for the first 250
#' iterations, 1,000 iterations, a spectral (or PCA) start scaled to a small
#' standard deviation.
#'
#' Results are reproducible with [set.seed()] (random numbers are drawn only
#' for the initialisation and the sampled path's seed) and do not depend on
#' `n_threads`, on any gradient path. Ctrl-C stops the
#' run within a second.
#'
#' @param X A numeric data matrix or data frame (rows are points; the numeric
#'   columns of a data frame are used, and a message names any others
#'   dropped), or `NULL` when `nn_method` is given.
#' @param method `"tsne"`, `"largevis"`, `"umap"` or `"tumap"`.
#' @param nn_method A neighbour graph `list(idx, dist)` of the points (such
#'   as one from [extended_knn()] or [locally_scaled_knn()], or uwot's
#'   `nn`), used for the affinities in place of one computed from `X`. As in
#'   uwot, `X` may then be `NULL`.
#' @param perplexity Perplexity of the t-SNE and LargeVis affinities.
#' @param n_neighbors Neighbours of each point (itself included) for UMAP's
#'   affinities when `X` is a data matrix.
#' @param n_components Dimension of the embedding.
#' @param init `"spectral"` (eigenvectors of the normalised Laplacian of the
#'   affinity graph, via RSpectra or else irlba), `"pca"` (the first principal
#'   components of `X`), `"random"` (Gaussian), or an n x `n_components`
#'   matrix (used as it is).
#' @param max_iter Maximum number of iterations (epochs for `"sampled"`);
#'   `NULL` for 1,000 (500 for `"sampled"`).
#' @param eta Step size (the initial learning rate for `"sampled"`); `NULL`
#'   for the method's default.
#' @param exaggeration,stop_lying_iter Early exaggeration factor and the last
#'   iteration it applies to; `NULL` for the method's default.
#' @param momentum,final_momentum,mom_switch_iter Momentum before and from
#'   iteration `mom_switch_iter`.
#' @param min_gain Smallest gain.
#' @param tol Relative change of the cost between epochs below which the run
#'   stops (0 to always run `max_iter` iterations).
#' @param epoch Iterations between cost evaluations (and progress messages).
#' @param init_sdev Standard deviation the initial coordinates are scaled to
#'   (not for a matrix `init`); `NULL` for 1e-4 (2 for `"sampled"`).
#' @param gamma,eps,weight,alpha,a,b,spread,min_dist Cost parameters, see
#'   [cost_gradient()]; `gamma = NULL` gives LargeVis's default above (for
#'   `"sampled"`, `gamma` weighs each sampled repulsion instead).
#' @param n_threads Number of threads, capped at what the machine can run
#'   (`RcppParallel::defaultNumThreads()`).
#' @param verbose If `TRUE`, report progress: the steps, a cli progress bar
#'   for each long phase (search, calibration, optimization) and its summary
#'   line, and the cost every `epoch` iterations.
#' @param gradient `"auto"`, `"exact"`, `"approx"` or `"sampled"`: how the
#'   all-pairs part of the gradient is summed (see Details).
#' @param negative_sample_rate Points pushed away per sampled edge
#'   (`"sampled"` only).
#' @param ret_extra `TRUE` to return a list with the embedding and details
#'   (below); or, as in uwot, a character vector of the extras wanted besides
#'   the embedding: `"nn"` (the neighbour graph used, `NULL` for t-SNE and
#'   LargeVis affinities over all pairs), `"P"` or `"fgraph"` (the input
#'   affinities). lsnn keeps no `"model"` for new data.
#' @return An n x `n_components` matrix (the row names of `X` kept); with
#'   `ret_extra` a character vector, a list with `embedding` and the extras
#'   asked for; with
#'   `ret_extra = TRUE`, a list with `embedding`, `cost` (the cost history,
#'   named by iteration: 0 is the initial coordinates), `iterations` (done),
#'   `converged` (stopped by `tol`), `time` (seconds: affinities,
#'   initialisation, optimisation, total), the affinity matrix `P` and the
#'   settings used (`eta`, `exaggeration`, `stop_lying_iter`, `gamma`, `eps`,
#'   `a`, `b`) and `gradient` (the path taken: `"exact"`, `"approx"` or
#'   `"sampled"`).
#' @seealso [embed()], this function's former name.
#' @examples
#' X <- as.matrix(iris[, 1:4])
#' X <- X[!duplicated(X), ]
#' Y <- neighbor_embedding(X, "tsne", perplexity = 15, max_iter = 300)
#' plot(Y)
#' # UMAP on a locally scaled neighbour graph, without the data
#' g <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact")
#' Y <- neighbor_embedding(method = "umap", nn_method = g, max_iter = 300)
#' @export
neighbor_embedding <- function(X = NULL, method = c("tsne", "largevis", "umap", "tumap"),
                  nn_method = NULL,
                  perplexity = 30, n_neighbors = 15, n_components = 2, init = NULL,
                  max_iter = NULL, eta = NULL, exaggeration = NULL,
                  stop_lying_iter = NULL, momentum = 0.5, final_momentum = 0.8,
                  mom_switch_iter = 250, min_gain = 0.01, tol = 1e-7, epoch = 50,
                  init_sdev = NULL, gamma = NULL, eps = NULL, weight = "cauchy",
                  alpha = 1, a = NULL, b = NULL, spread = 1, min_dist = 0.1,
                  n_threads = 1, verbose = FALSE, ret_extra = FALSE,
                  gradient = c("auto", "exact", "approx", "sampled"),
                  negative_sample_rate = 5) {
  t_start <- proc.time()[["elapsed"]]
  method <- match.arg(method)
  gradient <- ne_gradient_arg(gradient, c("auto", "exact", "approx", "sampled"))
  if (gradient == "sampled" && method == "tsne") {
    stop_arg("'gradient' = \"sampled\" is for \"largevis\", \"umap\" and \"tumap\": ",
             "t-SNE's normalisation needs every pair (use \"approx\")")
  }
  n_threads <- check_n_threads(n_threads)
  perplexity <- check_number(perplexity, "perplexity", min = 1, above = TRUE)
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 2)
  n_components <- check_whole(n_components, "n_components", min = 1)
  if (!is.null(max_iter)) max_iter <- check_whole(max_iter, "max_iter", min = 0)
  momentum <- check_number(momentum, "momentum", min = 0, max = 1, below = TRUE)
  final_momentum <- check_number(final_momentum, "final_momentum", min = 0, max = 1,
                                 below = TRUE)
  mom_switch_iter <- check_whole(mom_switch_iter, "mom_switch_iter", min = 0)
  min_gain <- check_number(min_gain, "min_gain", min = 0)
  tol <- check_number(tol, "tol", min = 0)
  epoch <- check_whole(epoch, "epoch", min = 1)
  if (!is.null(init_sdev)) init_sdev <- check_number(init_sdev, "init_sdev", min = 0, above = TRUE)
  negative_sample_rate <- check_whole(negative_sample_rate, "negative_sample_rate", min = 1)
  verbose <- check_flag(verbose, "verbose")
  ret_extra <- check_ret_extra(ret_extra)

  # ---- data and graph ----
  inputs <- ne_inputs(X, nn_method)
  data <- inputs$data
  graph <- inputs$graph
  row_names <- if (is.null(data)) NULL else rownames(data)
  n <- if (is.null(graph)) nrow(data) else nrow(graph$idx)
  if (n < 3) stop_arg("at least 3 points are needed (there are ", n, ")")
  if (n_components > n) {
    stop_arg("'n_components' must be at most the number of points, ", n,
             " (it is ", n_components, ")")
  }

  # ---- affinities ----
  ne_msg(verbose, "neighbor_embedding: ", method, ", ", n, " points")
  if (method %in% c("tsne", "largevis")) {
    if (is.null(graph) && n > 1000) {
      k <- min(n - 1L, as.integer(ceiling(3 * perplexity)))
      ne_msg(verbose, "neighbor_embedding: ", ne_nn_kind(n), " ", k, "-nearest neighbours")
      graph <- extended_knn(data, n_neighbors = k, n_extra = 0, n_threads = n_threads,
                            nn_kind = ne_nn_kind(n), verbose = verbose)
    }
    ne_msg(verbose, "neighbor_embedding: perplexity calibration (perplexity ", perplexity, ")")
    P <- if (is.null(graph)) {
      perplexity_affinities(data, perplexity = perplexity, n_threads = n_threads,
                            verbose = verbose)
    } else {
      perplexity_affinities(nn_method = graph, perplexity = perplexity, n_threads = n_threads,
                            verbose = verbose)
    }
  } else {
    if (is.null(graph)) {
      k <- n_neighbors
      if (k > n) {
        stop_arg("'n_neighbors' must be at most the number of points, ", n, " (it is ", k, ")")
      }
      ne_msg(verbose, "neighbor_embedding: ", ne_nn_kind(n), " ", k - 1L,
             "-nearest neighbours")
      graph <- extended_knn(data, n_neighbors = k - 1L, n_extra = 0, n_threads = n_threads,
                            nn_kind = ne_nn_kind(n), verbose = verbose)
    }
    ne_msg(verbose, "neighbor_embedding: UMAP affinities")
    P <- umap_affinities(nn_method = graph, n_threads = n_threads, verbose = verbose)
  }
  t_aff <- proc.time()[["elapsed"]]

  # ---- method settings ----
  lv <- method == "largevis"
  grad_kind <- ne_gradient_kind(gradient, method, n, n_components)
  sampled <- grad_kind == "sampled"
  # the cost's own repulsion weight, and the weight of one sampled repulsion
  cost_gamma <- if (lv) 1 / (10 * n) else 1
  if (is.null(gamma)) gamma <- if (sampled) (if (lv) 7 else 1) else cost_gamma
  cs <- ne_cost_settings(method, gamma = gamma, eps = eps, a = a, b = b, weight = weight,
                         alpha = alpha, spread = spread, min_dist = min_dist)
  # t-SNE: 750 iterations, as openTSNE and FIt-SNE (bench/README.md)
  if (is.null(max_iter)) max_iter <- if (sampled) 500L else if (method == "tsne") 750L else 1000L
  if (is.null(init_sdev)) init_sdev <- if (sampled) 2 else 1e-4
  # umap, tumap: 0.03 measured best of 0.003-1 at 2,000-3,000 points (see Details)
  # t-SNE: n / exaggeration in each phase (openTSNE's rule), unless eta is given
  eta_given <- !is.null(eta)
  if (is.null(eta)) eta <- if (sampled) 1 else switch(method, tsne = n, largevis = n / 20, 0.03)
  if (sampled && !is.null(exaggeration) && !identical(exaggeration, 1)) {
    stop_arg("'exaggeration' is not used by gradient = \"sampled\" (leave it NULL or 1)")
  }
  if (is.null(exaggeration)) exaggeration <- if (sampled) 1 else switch(method, tsne = 12, largevis = 4, 1)
  # (checked before the default of stop_lying_iter reads it)
  exaggeration <- check_number(exaggeration, "exaggeration", min = 0, above = TRUE)
  if (is.null(stop_lying_iter)) stop_lying_iter <- if (exaggeration != 1) 250L else 0L
  eta <- check_number(eta, "eta", min = 0, above = TRUE)
  eta_exaggerated <- if (method == "tsne" && !eta_given) n / exaggeration else eta
  stop_lying_iter <- check_whole(stop_lying_iter, "stop_lying_iter", min = 0)
  if (exaggeration != 1 && max_iter > 0 && max_iter < stop_lying_iter) {
    warning("'max_iter' (", max_iter, ") is below 'stop_lying_iter' (", stop_lying_iter,
            "): the run ends during early exaggeration, with the clusters still ",
            "exaggerated; raise 'max_iter' or lower 'stop_lying_iter'", call. = FALSE)
  }

  # ---- initial coordinates ----
  # PCA at scale: as good a t-SNE start as the spectral one, for a third of its time
  if (is.null(init)) init <- if (method == "tsne" && !is.null(data) && n > 20000) "pca" else "spectral"
  Y0 <- ne_init(init, data, P, n, n_components, init_sdev, verbose)
  t_init <- proc.time()[["elapsed"]]

  layout <- if (sampled) {
    # the cost is recorded at the end (every epoch from the start when
    # verbose), from the sums of the full gradient: exact while they are cheap
    cost_kind <- if (n_components <= 2 && n > ne_exact_max_n(method)) "approx" else "exact"
    list(stepper = "sampled", max_iter = max_iter, epoch = if (verbose) epoch else 0L,
         learning_rate = eta, negative_sample_rate = negative_sample_rate, gamma = gamma,
         seed = ne_seed())
  } else {
    list(stepper = "gradient_descent", max_iter = max_iter, epoch = epoch, tol = tol,
         eta = eta, eta_exaggerated = eta_exaggerated, momentum = momentum,
         final_momentum = final_momentum,
         mom_switch_iter = mom_switch_iter, exaggeration = exaggeration,
         stop_lying_iter = stop_lying_iter, min_gain = min_gain)
  }
  ne_msg(verbose, "neighbor_embedding: optimizing (", if (sampled) "learning rate " else "eta ",
         signif(eta, 4), ", ", grad_kind, " gradient)")
  # the objective: the documented cost (for "sampled", with its own gamma,
  # for the costs recorded)
  cost <- cs
  if (sampled) cost$gamma <- cost_gamma
  cost <- ne_cost_list(cost, if (sampled) cost_kind else grad_kind)
  res <- .optimize_layout(Y0, P, cost, layout, n_threads, verbose, simd_option())
  t_end <- proc.time()[["elapsed"]]
  if (verbose && !sampled && !res$converged && max_iter > 0) {
    ne_msg(verbose, "neighbor_embedding: stopped at max_iter = ", max_iter, " without ",
           if (tol > 0) paste0("converging (relative cost change above tol = ", tol, ")")
           else "a convergence test (tol = 0)")
  }
  Y <- res$Y
  dimnames(Y) <- list(row_names, NULL)
  if (is.character(ret_extra)) {
    extras <- list(nn = graph, P = P, fgraph = P)[ret_extra]
    return(c(list(embedding = Y), extras))
  }
  if (!ret_extra) return(Y)
  list(embedding = Y, cost = res$cost, iterations = res$iterations,
       converged = res$converged,
       time = c(affinities = t_aff - t_start, init = t_init - t_aff,
                optimize = t_end - t_init, total = t_end - t_start),
       P = P, gradient = grad_kind, eta = eta,
       eta_exaggerated = if (sampled) NULL else eta_exaggerated, exaggeration = exaggeration,
       stop_lying_iter = stop_lying_iter, gamma = cs$gamma, eps = cs$eps, a = cs$a,
       b = cs$b)
}

# The gradient actually used: "auto" is exact up to ne_exact_max_n() points,
# then the grid's approximation; for LargeVis, UMAP and t-UMAP, negative
# sampling above ne_sampled_min_n() points (in any dimension).
ne_gradient_kind <- function(gradient, method, n, n_components) {
  if (gradient != "auto") return(gradient)
  if (method != "tsne" && n > ne_sampled_min_n()) return("sampled")
  if (n_components <= 2 && n > ne_exact_max_n(method)) "approx" else "exact"
}

# Above this many points "auto" lays LargeVis, UMAP and t-UMAP out by
# negative sampling: at 10,000 Fashion-MNIST images the full gradient's
# layouts already break the classes into loose clumps, at 70,000 they are a
# uniform disc (see ?neighbor_embedding).
ne_sampled_min_n <- function() 10000L

# A seed for the core's generators, from R's: set.seed() fixes it.
ne_seed <- function() {
  floor(stats::runif(1) * 2^31) * 2^20 + floor(stats::runif(1) * 2^20)
}

# The approximation's grid, c(nodes, box width, minimum boxes), from the
# option lsnn.grid (for measurements; numeric(0) keeps the core's defaults).
ne_grid_option <- function() {
  g <- getOption("lsnn.grid", numeric(0))
  as.numeric(g)
}

# Largest n for which gradient = "auto" sums all pairs (see ?neighbor_embedding):
# where one exact and one approximate evaluation cost about the same (measured
# in one process, 2 threads, n = 2,000 to 20,000).
ne_exact_max_n <- function(method) {
  switch(method, tsne = 20000L, umap = 2000L, tumap = 7000L, largevis = 5000L, 10000L)
}

# The kNN search neighbor_embedding() runs on a data matrix: exact up to 20,000 rows.
ne_nn_kind <- function(n) {
  if (n > 20000) "approx" else "exact"
}

# The data matrix and the graph the affinities come from: X is data (or
# NULL), nn_method a graph (or NULL), at least one of them given.
ne_inputs <- function(X, nn_method) {
  data <- NULL
  graph <- NULL
  if (!is.null(X)) {
    if (is_graph_like(X)) {
      stop_arg("'X' is a neighbour graph: pass it as 'nn_method' ",
               "(neighbor_embedding(nn_method = graph), X = NULL or the data)")
    }
    data <- check_dense_data(X, "X")
  }
  if (!is.null(nn_method)) {
    if (!is_graph_like(nn_method)) {
      stop_arg("'nn_method' must be a neighbour graph: a list with matrices 'idx' and 'dist' ",
               "(NULL computes exact neighbours from 'X')")
    }
    graph <- check_graph(nn_method, "nn_method", min_cols = 2)
    if (!is.null(data) && nrow(graph$idx) != nrow(data)) {
      stop_arg("'nn_method' has ", nrow(graph$idx), " rows but 'X' has ", nrow(data))
    }
  }
  if (is.null(data) && is.null(graph)) {
    stop_arg("give the data as 'X' or a neighbour graph as 'nn_method'")
  }
  list(data = data, graph = graph)
}

ne_msg <- function(verbose, ...) {
  if (verbose) message(...)
}

# Initial coordinates, scaled to sd init_sdev (the first column's; the
# others keep their relative scale).
ne_init <- function(init, data, P, n, k, init_sdev, verbose) {
  if (is.matrix(init) || is.data.frame(init)) {
    Y <- as.matrix(init)
    if (!is.numeric(Y) || nrow(Y) != n || ncol(Y) != k) {
      stop_arg("'init' must be a numeric ", n, " x ", k, " matrix (n x n_components) ",
               "or one of \"spectral\", \"pca\", \"random\"")
    }
    if (!all_finite(Y)) stop_arg("'init' must be finite (no NA, NaN or Inf)")
    # beyond this the squared distances between points overflow
    if (max(abs(Y)) > 1e100) stop_arg("'init' has coordinates too large (above 1e100)")
    storage.mode(Y) <- "double"
    return(unname(Y))
  }
  if (!is.character(init) || length(init) != 1 ||
      !init %in% c("spectral", "pca", "random")) {
    stop_arg("'init' must be \"spectral\", \"pca\", \"random\" or a matrix")
  }
  if (init == "pca" && is.null(data)) {
    stop_arg("'init' = \"pca\" needs the data as 'X', not only a graph")
  }
  ne_msg(verbose, "neighbor_embedding: ", init, " initialisation")
  Y <- switch(init,
    random = matrix(stats::rnorm(n * k), n, k),
    pca = ne_pca(data, k),
    spectral = ne_spectral(P, k)
  )
  if (is.null(Y)) {
    fallback <- if (is.null(data)) "random" else "pca"
    warning(sprintf("spectral initialisation failed; using \"%s\"", fallback), call. = FALSE)
    Y <- if (is.null(data)) matrix(stats::rnorm(n * k), n, k) else ne_pca(data, k)
  }
  Y <- sweep(Y, 2, colMeans(Y))
  s <- stats::sd(Y[, 1])
  if (!is.finite(s) || s <= 0) s <- 1
  Y <- Y * (init_sdev / s)
  if (!all_finite(Y) || max(abs(Y)) > 1e100) {
    stop_arg("'init_sdev' (", init_sdev, ") is too large: the initial coordinates would ",
             "exceed 1e100")
  }
  Y
}

# Columns of eigenvectors get a definite sign: largest |entry| positive.
ne_fix_signs <- function(V) {
  for (j in seq_len(ncol(V))) {
    if (V[which.max(abs(V[, j])), j] < 0) V[, j] <- -V[, j]
  }
  V
}

# The first k principal component scores; when X has fewer than k columns
# the missing coordinates are small random numbers (a constant coordinate
# would never move).
ne_pca <- function(X, k) {
  kk <- min(k, ncol(X))
  X <- sweep(X, 2, colMeans(X))
  if (requireNamespace("irlba", quietly = TRUE) && min(dim(X)) > 3 * kk + 10) {
    s <- irlba::irlba(X, nv = kk)
    Y <- s$u %*% diag(s$d[seq_len(kk)], kk)
  } else {
    s <- svd(X, nu = kk, nv = 0)
    Y <- s$u %*% diag(s$d[seq_len(kk)], kk)
  }
  Y <- ne_fix_signs(Y)
  if (kk < k) {
    s1 <- stats::sd(Y[, 1])
    if (!is.finite(s1) || s1 <= 0) s1 <- 1
    Y <- cbind(Y, matrix(stats::rnorm(nrow(Y) * (k - kk), sd = 1e-2 * s1), nrow(Y), k - kk))
  }
  Y
}

# The top k + 1 eigenvectors of D^-1/2 A D^-1/2 (the smallest of the
# normalised Laplacian) without the trivial one, D^1/2 1: it is projected out
# and the k remaining directions kept, which also works when the graph has
# several components (eigenvalue 1 repeated). NULL when no eigensolver
# succeeds.
ne_spectral <- function(A, k) {
  n <- nrow(A)
  if (k + 1 >= n) return(NULL)
  deg <- Matrix::rowSums(A)
  deg[deg <= 0] <- 1
  Dh <- Matrix::Diagonal(x = 1 / sqrt(deg))
  M <- Matrix::forceSymmetric(Dh %*% A %*% Dh)
  V <- NULL
  if (n <= 200) {
    V <- eigen(as.matrix(M), symmetric = TRUE)$vectors[, seq_len(k + 1), drop = FALSE]
  } else {
    if (requireNamespace("RSpectra", quietly = TRUE)) {
      res <- tryCatch(
        suppressWarnings(RSpectra::eigs_sym(
          M, k + 1, which = "LA",
          opts = list(tol = 1e-6, maxitr = 2000, ncv = min(n, max(2 * (k + 1) + 1, 20)),
                      initvec = stats::rnorm(n)))),
        error = function(e) NULL)
      if (!is.null(res) && res$nconv >= k + 1) V <- res$vectors[, seq_len(k + 1)]
    }
    if (is.null(V) && requireNamespace("irlba", quietly = TRUE)) {
      # M + I is positive semi-definite: its top singular vectors are M's
      # top eigenvectors
      res <- tryCatch(
        suppressWarnings(irlba::partial_eigen(M + Matrix::Diagonal(n), n = k + 1,
                                              symmetric = TRUE)),
        error = function(e) NULL)
      if (!is.null(res)) V <- res$vectors[, seq_len(k + 1)]
    }
  }
  if (is.null(V) || anyNA(V)) return(NULL)
  v0 <- sqrt(deg) / sqrt(sum(deg))
  V <- V - v0 %*% crossprod(v0, V)
  V <- svd(V, nu = k, nv = 0)$u
  ne_fix_signs(V)
}
