#' Neighbour embedding: t-SNE, LargeVis, UMAP, PaCMAP and LocalMAP
#'
#' Embeds the rows of a data matrix, or the points of a neighbour graph, in
#' `n_components` dimensions by minimising the t-SNE, LargeVis, UMAP or
#' PaCMAP cost (see [cost_gradient()]): t-SNE by gradient descent with
#' momentum and delta-bar-delta gains; LargeVis, UMAP and t-UMAP by
#' stochastic gradient descent with negative sampling, as LargeVis, uwot and
#' umap-learn do (their full cost's gradient is an option, below); PaCMAP
#' and LocalMAP by Adam, as their authors' implementation does.
#'
#' **PaCMAP and LocalMAP** (Wang et al. 2021; 2025) lay out three kinds of
#' pairs, each kind with its own loss of \eqn{t = 1 + d_{ij}^2}{t = 1 + d_ij^2}:
#' *near* pairs, each row's locally scaled neighbours ([locally_scaled_knn()],
#' 50 extra candidates; or the neighbours of `nn_method` after the row
#' itself), with loss \eqn{t / (10 + t)}; *mid-near* pairs, each the second
#' nearest of 6 random rows, \eqn{t / (10000 + t)}; and *further* pairs, random
#' rows that are not near partners, \eqn{1 / (1 + t)}. Each row has
#' `n_neighbors` near pairs (`NULL`: 10 up to 10,000 rows, then
#' `round(10 + 15 * (log10(n) - 4))`), `round(n_neighbors * mn_ratio)`
#' mid-near and `round(n_neighbors * fp_ratio)` further pairs (fewer when
#' there are few points). The run has three phases of `phases` iterations:
#' first the mid-near weight falls from 1000 to 3 (near 2, further 1), then
#' near 3, mid-near 3, further 1, then near 1, further 1 and no mid-near
#' pairs. LocalMAP differs in its last phase: every 10 iterations each
#' further pair is redrawn among the points within `low_dist_thres` of its
#' row's point in the embedding (a slot keeps its pair when 100 draws find
#' none), and the near attraction is scaled by
#' \eqn{(low\_dist\_thres / 2) / \sqrt{t}}{(low_dist_thres / 2) / sqrt(t)}.
#' The points move by Adam (learning rate `eta`, default 1; betas 0.9 and
#' 0.999). Data with more than 100 columns are first reduced to 100
#' principal components unless `pca` says otherwise (see "PCA first"; 0
#' keeps the columns), and the start is 0.01 times the first principal
#' components (of the data scaled to a range of 1 when not reduced). `max_iter` (default
#' `sum(phases)`) may end the run early. `ret_extra = "pairs"` returns the
#' pairs, `list(near, mid_near, further)`: n-row matrices of 1-based partner
#' numbers, the further ones as they are at the end. A graph given as
#' `nn_method` with fewer neighbours than the rule asks for is used as it is,
#' with a warning that gives both numbers. The arguments of the other methods
#' (`perplexity`, `neighbors`, `gradient`, `exaggeration`, the momentum and
#' gain settings, `gamma`, `a`, `b`, ...) have no meaning here: naming one
#' gives a warning.
#'
#' **PCA first.** With `pca = k` the rows of `X` are replaced, before
#' anything else (the neighbour search, the affinities over all pairs of
#' small data, the `"pca"` start), by their first `k` principal components,
#' as `uwot::umap(pca = )`, Rtsne's `initial_dims` and PaCMAP's `apply_pca`
#' do: the search then runs on `k` columns instead of `ncol(X)`. The
#' components are computed exactly (the top eigenvectors of the covariance,
#' in lsnn's core; identical for any `n_threads`) for dense data of at most
#' 1,024 columns, and by irlba's truncated SVD otherwise (sparse data stays
#' sparse: irlba centres it implicitly). `pca_center = FALSE` leaves the
#' columns uncentred: the truncated SVD of the rows as they are, which keeps
#' their dot products (for counts or binary data, whose zeros mean absence).
#' A model (`ret_model = TRUE`) keeps the centre and rotation as
#' `model$pca`, `list(center, rotation)` (`center` `NULL` when not centred),
#' and [neighbor_embedding_transform()] projects new rows through them.
#'
#' **Starts and shrinking layouts.** A start that puts more than half of
#' the points on one spot (such as a matrix `init` of zeros) cannot separate
#' them, as coincident points feel the same forces: they are moved by a tiny
#' random jitter, with a warning. In gradient descent, a layout whose spread
#' (the root mean square of its centred coordinates) falls below 1e-8, as
#' early exaggeration can make a layout of unstructured data do, is scaled
#' back to 1e-4 with its pending steps: below that the output kernels cannot
#' tell its distances apart.
#'
#' **Input affinities.** `"tsne"` and `"largevis"`: [perplexity_affinities()],
#' over all pairs for a data matrix of at most 1,000 rows, otherwise over the
#' `3 * perplexity` nearest neighbours. `"umap"` and `"tumap"`:
#' [umap_affinities()] over `n_neighbors` neighbours (the point itself
#' included). The neighbours come from [extended_knn()], by the search
#' described there ("Which search runs"). A graph given as `nn_method` (such as the locally
#' scaled neighbours of [locally_scaled_knn()]) is used instead, and `X` may
#' then be `NULL`, as in `uwot::umap()`. `X` may also be a `dist` object
#' (such as `dist(X)`, or `as.dist()` of any distance matrix): each point's
#' nearest neighbours are then read from the distances, exactly, and the
#' affinities computed from them as from data (for t-SNE and LargeVis up to
#' 1,000 points, over all pairs): Euclidean distances give the data's exact
#' neighbours, and the layout of the same graph given as `nn_method` (the
#' data's own layout up to the rounding of the distances, which the
#' spectral start and the early iterations can amplify).
#' Your own affinities can be given as `P` (then no neighbours are
#' searched): a symmetric n x n matrix, dense or any sparse `Matrix` class,
#' non-negative and finite, checked in one pass over its entries (symmetric
#' to 100 machine epsilons, relative, entry by entry) and its diagonal ignored. For t-SNE
#' and LargeVis it is scaled to sum to 1, as [perplexity_affinities()] gives
#' it (whose output is used as it is: `P = perplexity_affinities(X)` lays out
#' as the data of at most 1,000 rows do); for UMAP and t-UMAP it is the fuzzy
#' graph, as [umap_affinities()] gives it, of values at most 1. Without the
#' data (`X` a `dist` object, `P` alone, or a graph alone) the start is
#' spectral by default and `init = "pca"` is not available.
#'
#' **Gradient.** `"exact"` sums every pair (O(n^2) time per iteration);
#' `"approx"` (1 or 2 dimensions) sums the all-pairs part in O(n) by grid
#' interpolation, with the near pairs summed exactly and separate clusters
#' on grids of their own, so that its time does not grow as the clusters
#' drift apart (see [cost_gradient()]). t-SNE's grid is coarser during the
#' early exaggeration (FIt-SNE's: 3 nodes per box, boxes 1 wide, no near
#' field), and a layout of more than 200,000 points keeps that grid to the
#' end: there the default grid's accuracy made iterations about 3 times
#' dearer for a cost 0.02 % lower ([far_field_plan()] shows both grids);
#' `"sampled"` (not t-SNE) follows the gradient of the attractions and of a
#' few randomly drawn repulsions per attraction. `"auto"` takes negative
#' sampling for LargeVis, UMAP and t-UMAP at every size, which gives the
#' layouts uwot and umap-learn give; for t-SNE the exact sum up to 3,000
#' points (and in more than 2 dimensions), the approximation above, where
#' it is the faster of the two for the same final cost.
#' `"exact"` and `"approx"` for LargeVis, UMAP and t-UMAP minimise their
#' full cost, every pair's repulsion included: that answers what the cost
#' itself favours (a layout several times wider than negative sampling's,
#' which weighs repulsions far less), for studying the costs rather than
#' for everyday layouts.
#'
#' **Gradient descent.** Each step updates the gains (+0.2 where the
#' gradient's sign differs from the last update's, x0.8 where it agrees, at
#' least `min_gain`), takes the step
#' `update <- momentum * update - eta * gains * gradient` and recentres the
#' coordinates. The momentum is `momentum` before iteration `mom_switch_iter`
#' and `final_momentum` after; the affinities are multiplied by
#' `exaggeration` up to iteration `stop_lying_iter`. The cost is evaluated
#' every `epoch` iterations; after the exaggeration the run stops when it
#' changes by less than a relative `tol` between two evaluations.
#'
#' **Negative sampling.** Each epoch samples every edge of P once per
#' `max(P) / p_ij` epochs; a sampled edge pulls its point towards its
#' neighbour and pushes it away from `negative_sample_rate` random points,
#' each push weighted by `gamma`; every pull or push is clipped to 4 per
#' coordinate. All points then move by an Adam step whose learning rate falls
#' linearly from `eta` to 0 over `max_iter` epochs. The cost is reported at
#' the end (and every `epoch` epochs with `verbose = TRUE`).
#'
#' **Defaults.** `"tsne"`: step `n / exaggeration` in each phase (`n / 12`
#' during the early exaggeration, then `n`; a given `eta` is used in both),
#' `exaggeration = 12` up to iteration 250, 750 iterations, and a PCA start
#' when `X` has more than 20,000 rows (else spectral). `"largevis"`:
#' `gamma = 1 / (10 n)`, `eta = n / 20`, `exaggeration = 4` up to iteration
#' 250, `eps = 0.1`, 1,000 iterations. `"umap"` and `"tumap"`: `eta = 0.03`,
#' no exaggeration, `eps = 0.001`, a and b from [umap_ab()] (1 for
#' `"tumap"`), 1,000 iterations. The start is scaled to a standard deviation
#' of `init_sdev = 1e-4`. Negative sampling: 500 epochs up to 10,000 points,
#' then `round(5e6 / n)` down to 200 from 25,000 points (uwot's 200 above
#' 10,000, without a drop in time at 10,000), `eta = 1`, `gamma = 1` (7 for
#' LargeVis), `init_sdev = 2`. How each default was
#' chosen, and what it costs, is in `bench/README.md` of the source package.
#'
#' **Callback.** A `callback` function is called every `epoch` iterations
#' (epochs for `"sampled"`), between two steps, with the iteration number and
#' the layout so far: an n x `n_components` matrix with the row names of the
#' points (of `X`, or of `P`, or the labels of a `dist` object). A function
#' of three arguments is called as uwot calls its `epoch_callback`, with the
#' iteration, the number of iterations planned (`max_iter`) and the layout;
#' one of any other form than two or three arguments is an error before the
#' run. When it
#' returns `FALSE` the run stops there, and the result is the layout at that
#' iteration (`ret_extra = TRUE` reports the `iterations` done and
#' `stopped = TRUE`); any other value (`TRUE`, `NULL`, ...) lets the run
#' go on. It sees the layout only: a run with a callback that never stops it
#' gives the same result as the run without. An error in the callback ends
#' the run with an error naming it and the iteration.
#'
#' With `verbose = TRUE` the run reports its steps, progress bars and the
#' cost every `epoch` iterations. A `max_iter` below `stop_lying_iter` gives
#' a warning; coordinates that diverge (from a too large `eta` or
#' `exaggeration`) give an error. Results are reproducible with
#' [set.seed()] and do not depend on `n_threads`. Ctrl-C stops the run
#' within a second; it, and the limit of [setTimeLimit()] (as
#' `R.utils::withTimeout()` sets it), reach the caller's [tryCatch()] as
#' R raises them, once the run has stopped and freed its memory.
#'
#' @param X A numeric data matrix, data frame or sparse matrix (rows are
#'   points; the numeric columns of a data frame are used, and a message
#'   names any others dropped); or the points' distances, a `dist` object;
#'   or `NULL` when `nn_method` or `P` is given. For PaCMAP and LocalMAP also
#'   a shard set ([write_shards()], [shard_set()]) with its sharded graph from
#'   [locally_scaled_knn_sharded()] as `nn_method` (the object it returned,
#'   or its `out_dir`): the rows are read into
#'   memory once (n x columns doubles, for the mid-near pairs and the start)
#'   and freed before the layout, the graph's neighbour lists without their
#'   distances; the result equals that of the same data and graph in memory,
#'   with the shards' row names where every shard has them. The graph must
#'   have been made from these shards: the fingerprints its run recorded
#'   must be those of the shards as they are read, or the error names the
#'   first shard that differs. Its near pairs are the graph's neighbours
#'   (`n_neighbors - 1` per point of
#'   `locally_scaled_knn_sharded(n_neighbors = )`): without `n_neighbors`
#'   given, a warning says when they are fewer than PaCMAP's rule asks for.
#'   A sharded layout cannot be kept as a model for new points
#'   (`ret_model = TRUE` is refused: a model holds its data and their
#'   index in memory); to place new points, lay out the data in memory.
#' @param method `"tsne"`, `"largevis"`, `"umap"`, `"tumap"`, `"pacmap"` or
#'   `"localmap"`.
#' @param nn_method A neighbour graph of the points (such as one from
#'   [extended_knn()] or [locally_scaled_knn()], or another package's in a
#'   form listed in [extended_knn()]), used for the affinities in place of
#'   one computed from `X`. As in uwot, `X` may then be `NULL`.
#' @param perplexity Perplexity of the t-SNE and LargeVis affinities.
#' @param n_neighbors Neighbours of each point (itself included) for UMAP's
#'   affinities when `X` is a data matrix (`NULL`: 15); for PaCMAP and
#'   LocalMAP the near pairs of each point (`NULL`: PaCMAP's rule, see
#'   Details).
#' @param n_components Dimension of the embedding.
#' @param init `"spectral"` (eigenvectors of the normalised Laplacian of the
#'   affinity graph, via RSpectra or else irlba), `"pca"` (the first principal
#'   components of `X`), `"random"` (Gaussian), or an n x `n_components`
#'   matrix (used as it is); `NULL` for `"pca"` for t-SNE of more than 20,000
#'   rows of data `X`, `"spectral"` otherwise (and always without the data:
#'   distances, `P` or a graph alone).
#' @param max_iter Maximum number of iterations (epochs for `"sampled"`);
#'   `NULL` for 750 for t-SNE, 450 (the sum of `phases`) for PaCMAP and
#'   LocalMAP, 1,000 for the full gradient of the others, and for negative
#'   sampling 500 up to 10,000 points, fewer above (see Defaults).
#' @param eta Step size (the initial learning rate for `"sampled"`); `NULL`
#'   for the method's default (see Defaults).
#' @param exaggeration,stop_lying_iter Early exaggeration factor and the last
#'   iteration it applies to; `NULL` for the method's default.
#' @param momentum,final_momentum,mom_switch_iter Momentum before and from
#'   iteration `mom_switch_iter`.
#' @param min_gain Smallest gain.
#' @param tol Relative change of the cost between epochs below which the run
#'   stops (0 to always run `max_iter` iterations).
#' @param epoch Iterations between cost evaluations (and progress messages)
#'   and between calls of `callback`.
#' @param init_sdev Standard deviation the initial coordinates are scaled to
#'   (not for a matrix `init`); `NULL` for 1e-4 (2 for `"sampled"`).
#' @param gamma,eps,weight,alpha,a,b,spread,min_dist Cost parameters, see
#'   [cost_gradient()]; `gamma = NULL` gives LargeVis's default above (for
#'   `"sampled"`, `gamma` weighs each sampled repulsion instead).
#' @param n_threads Number of threads, capped at what the machine can run
#'   (`RcppParallel::defaultNumThreads()`); `NULL` (the default) for
#'   [default_n_threads()]: every core R may use. Results do not depend on it.
#' @param verbose If `TRUE`, report progress: the steps, a cli progress bar
#'   for each long phase (search, calibration, optimization) and its summary
#'   line, and the cost every `epoch` iterations.
#' @param gradient `"auto"`, `"exact"`, `"approx"` or `"sampled"`: how the
#'   all-pairs part of the gradient is summed (see Details).
#' @param negative_sample_rate Points pushed away per sampled edge
#'   (`"sampled"` only), at most 1,000.
#' @param neighbors Which neighbours of the rows of `X` the affinities use:
#'   `"knn"`, the nearest ([extended_knn()]), or `"lsnn"`, the locally scaled
#'   ones ([locally_scaled_knn()]). Not used with `nn_method`.
#' @param mn_ratio,fp_ratio PaCMAP's mid-near and further pairs per near
#'   pair.
#' @param phases PaCMAP's three phase lengths, in iterations.
#' @param low_dist_thres LocalMAP's distance in the embedding within which
#'   further pairs are redrawn in the last phase.
#' @param pca The number of principal components the rows of `X` are
#'   reduced to first (see "PCA first"): a whole number below `ncol(X)`, or
#'   0 or `NULL` for no reduction (`NULL` for PaCMAP and LocalMAP: 100 when
#'   the data have more columns, or one less than the number of rows when
#'   that is smaller, which keeps every distance between centred rows).
#'   Needs `X`.
#' @param pca_center If `TRUE`, the columns are centred before the PCA; if
#'   `FALSE`, the rows are reduced as they are (a truncated SVD).
#' @param ret_model If `TRUE`, return `list(embedding, model)` (with
#'   `ret_extra`, `model` follows `embedding` in that list): the model
#'   places new points with [neighbor_embedding_transform()]. It holds the
#'   embedding, the cost and, when `X` is given, an index of `X` (see
#'   [extended_knn_query()]); it survives [saveRDS()].
#' @param ret_extra `TRUE` to return a list with the embedding and details
#'   (below); or, as in uwot, a character vector of the extras wanted besides
#'   the embedding: `"nn"` (the neighbour graph used, `NULL` for t-SNE and
#'   LargeVis affinities over all pairs), `"P"` or `"fgraph"` (the input
#'   affinities), `"radii"` (t-SNE, UMAP and t-UMAP: the log radii of the points
#'   in the data and in the layout, `list(data, layout)`; see "Density
#'   (densMAP, den-SNE)"), and for PaCMAP and LocalMAP `"pairs"` (see Details). For a
#'   model that places new data, see `ret_model`.
#' @param seed `NULL` (the default) to draw random numbers from R's generator, so
#'   that [set.seed()] makes the result reproducible; or a whole number: the
#'   result then depends on it alone, and R's generator is left as it was.
#' @param P Your own input affinities in place of those computed from `X`
#'   (t-SNE, LargeVis, UMAP and t-UMAP): a symmetric n x n matrix, dense or
#'   any sparse `Matrix` class (see "Input affinities" in Details). `X` may be
#'   given too (for `init = "pca"` and the model's index) or left `NULL`;
#'   not with `nn_method`.
#' @param callback `NULL`, or a function of the iteration and the layout so
#'   far, `function(iteration, Y)`, or uwot's form
#'   `function(epoch, n_epochs, Y)`, called every `epoch` iterations;
#'   returning `FALSE` stops the run (see "Callback" in Details).
#' @param metric The distance between rows of `X` for the neighbour searches
#'   this call makes (see [extended_knn()]): `"euclidean"`, `"cosine"`,
#'   `"correlation"`, `"manhattan"` or `"hamming"` (for logical or 0/1 data;
#'   `pca` is then refused, and PaCMAP's default reduction is skipped). A
#'   graph given as `nn_method` (or a sharded graph) keeps the metric it was
#'   made with. t-SNE and LargeVis of at most 1,000 rows in another metric
#'   than euclidean take every pair from the search's graph.
#' @return An n x `n_components` matrix (the row names of `X` kept); with
#'   `ret_extra` a character vector, a list with `embedding` and the extras
#'   asked for; with
#'   `ret_extra = TRUE`, a list with `embedding`, `cost` (the cost history,
#'   named by iteration: 0 is the initial coordinates), `iterations` (done),
#'   `converged` (stopped by `tol`), `stopped` (stopped by `callback`),
#'   `time` (seconds: affinities,
#'   initialisation, optimisation, total), the affinity matrix `P` and the
#'   settings used (`eta`, `eta_exaggerated`, `exaggeration`,
#'   `stop_lying_iter`, `gamma`, `eps`, `a`, `b`) and `gradient` (the path taken: `"exact"`, `"approx"` or
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
#' # PaCMAP: near, mid-near and further pairs, laid out by Adam
#' Y <- neighbor_embedding(X, "pacmap")
#' # your own affinities; distances; a look every 100 iterations
#' P <- perplexity_affinities(X, perplexity = 15)
#' Y <- neighbor_embedding(P = P, max_iter = 300)
#' Y <- neighbor_embedding(dist(X, "manhattan"), "umap", max_iter = 300)
#' spread <- function(iteration, Y) {
#'   message("iteration ", iteration, ": sd ", signif(sd(Y[, 1]), 3))
#'   iteration < 200  # FALSE stops the run
#' }
#' Y <- neighbor_embedding(X, "tsne", perplexity = 15, max_iter = 300, epoch = 100,
#'                         callback = spread)
#' @export
neighbor_embedding <- function(X = NULL,
                  method = c("tsne", "largevis", "umap", "tumap", "pacmap", "localmap"),
                  nn_method = NULL,
                  perplexity = 30, n_neighbors = NULL, n_components = 2, init = NULL,
                  max_iter = NULL, eta = NULL, exaggeration = NULL,
                  stop_lying_iter = NULL, momentum = 0.5, final_momentum = 0.8,
                  mom_switch_iter = 250, min_gain = 0.01, tol = 1e-7, epoch = 50,
                  init_sdev = NULL, gamma = NULL, eps = NULL, weight = "cauchy",
                  alpha = 1, a = NULL, b = NULL, spread = 1, min_dist = 0.1,
                  n_threads = NULL, verbose = FALSE, ret_extra = FALSE,
                  gradient = c("auto", "exact", "approx", "sampled"),
                  negative_sample_rate = 5, neighbors = c("knn", "lsnn"),
                  ret_model = FALSE, mn_ratio = 0.5, fp_ratio = 2,
                  phases = c(100, 100, 250), low_dist_thres = 10, pca = NULL,
                  pca_center = TRUE, seed = NULL, P = NULL, callback = NULL,
                  metric = "euclidean", densmap = FALSE, dens_lambda = NULL, dens_frac = 0.3,
                  dens_var_shift = 0.1) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
  t_start <- proc.time()[["elapsed"]]
  # (before any argument is assigned, which makes missing() FALSE)
  given <- names(match.call())[-1]
  method <- choice_arg(method, c("tsne", "largevis", "umap", "tumap", "pacmap", "localmap"),
                            "method")
  gradient <- choice_arg(gradient, c("auto", "exact", "approx", "sampled"))
  if (gradient == "sampled" && method == "tsne") {
    stop_arg("'gradient' = \"sampled\" is for \"largevis\", \"umap\" and \"tumap\": ",
             "t-SNE's normalisation needs every pair (use \"approx\")")
  }
  n_threads <- check_n_threads(n_threads)
  perplexity <- check_number(perplexity, "perplexity", min = 1, above = TRUE)
  metric <- check_choice(metric, "metric", knn_metrics)
  pacmap <- method %in% c("pacmap", "localmap")
  if (pacmap) {
    given <- intersect(given, ne_unused_by_pacmap)
    if (length(given) > 0) {
      warning("not used by method = \"", method, "\": ", paste0("'", given, "'", collapse = ", "),
              " (PaCMAP and LocalMAP lay out near, mid-near and further pairs by Adam; ",
              "see ?neighbor_embedding)", call. = FALSE)
    }
  }
  if (!is.null(n_neighbors)) {
    n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = if (pacmap) 1 else 2)
  } else if (!pacmap) {
    n_neighbors <- 15L
  }
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
  negative_sample_rate <- check_whole(negative_sample_rate, "negative_sample_rate", min = 1,
                                      max = 1000)
  verbose <- check_flag(verbose, "verbose")
  ret_extra <- check_ret_extra(ret_extra, c("nn", "P", "fgraph", "pairs", "radii"),
                               if (pacmap) c("nn", "pairs") else c("nn", "P", "fgraph", "radii"),
                               method)
  dens <- dens_settings(densmap, dens_lambda, dens_frac, dens_var_shift, method)
  neighbors <- choice_arg(neighbors, c("knn", "lsnn"), "neighbors")
  ret_model <- check_flag(ret_model, "ret_model")
  mn_ratio <- check_number(mn_ratio, "mn_ratio", min = 0)
  fp_ratio <- check_number(fp_ratio, "fp_ratio", min = 0)
  phases <- check_phases(phases)
  low_dist_thres <- check_number(low_dist_thres, "low_dist_thres", min = 0, above = TRUE)
  pca <- check_pca(pca)
  pca_center <- check_flag(pca_center, "pca_center")
  callback <- check_callback(callback)
  index <- NULL

  # ---- data, graph, distances or affinities ----
  pacmap_settings <- if (pacmap) list(
    n_neighbors = n_neighbors, n_components = n_components, init = init,
    max_iter = max_iter, eta = if (!is.null(eta)) check_number(eta, "eta", min = 0, above = TRUE),
    epoch = epoch, mn_ratio = mn_ratio, fp_ratio = fp_ratio, phases = phases,
    low_dist_thres = low_dist_thres, n_threads = n_threads, verbose = verbose,
    ret_extra = ret_extra, ret_model = ret_model, callback = callback, metric = metric)
  if (inherits(X, "lsnn_shards")) {
    if (!is.null(P)) stop_arg("give the affinities as 'P' or a shard set as 'X', not both")
    if (ret_model) {
      stop_arg("'ret_model' = TRUE is not available for sharded 'X' (a model keeps its data)")
    }
    # (passed on without a binding here, so that ne_pacmap() can free the rows)
    return(ne_pacmap(reduce_inputs(pacmap_shard_inputs(X, nn_method, method, verbose,
                                                       n_neighbors), pca,
                                   pca_center, n_threads, verbose, "neighbor_embedding",
                                   default = pacmap_default_pca), method, pacmap_settings))
  }
  inputs <- resolve_inputs(X, nn_method, "neighbor_embedding", metric = metric, P = P,
                           embedding = TRUE, n_threads = n_threads)
  inputs$metric <- metric
  n <- inputs$n
  if (n < 3) stop_arg("at least 3 points are needed (there are ", n, ")")
  if (n_components > n) {
    stop_arg("'n_components' must be at most the number of points, ", n,
             " (it is ", n_components, ")")
  }
  inputs <- reduce_inputs(inputs, pca, pca_center, n_threads, verbose, "neighbor_embedding",
                          default = if (pacmap && metric %in% pca_metrics) pacmap_default_pca,
                          metric = metric)

  # ---- affinities ----
  if (pacmap) return(ne_pacmap(inputs, method, pacmap_settings))
  ne_msg(verbose, "neighbor_embedding: ", method, ", ", show_count(n), " points")
  keep_nn <- is.character(ret_extra) && "nn" %in% ret_extra
  radii_wanted <- dens_radii_wanted(dens, ret_extra, inputs, method)
  aff <- ne_affinities(inputs, method, perplexity, n_neighbors, neighbors, n_threads, verbose,
                       ret_model, keep_graph = keep_nn || radii_wanted)
  P <- aff$P
  graph <- aff$graph
  index <- aff$index
  data_radii <- if (radii_wanted) dens_data_radii(P, graph, inputs, n_threads)
  if (!keep_nn) graph <- NULL
  # what the search and the affinities let go (the graph, the conditional
  # rows) is of the order of P
  released <- held_bytes(P)
  rm(aff)
  collect_garbage(released)
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
  if (is.null(max_iter)) {
    max_iter <- if (sampled) ne_sampled_epochs(n) else if (method == "tsne") 750L else 1000L
  }
  if (is.null(init_sdev)) init_sdev <- if (sampled) 2 else 1e-4
  # umap, tumap: 0.03 measured best of 0.003-1 at 2,000-3,000 points (bench/README.md)
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
  if (is.null(init)) {
    init <- if (method == "tsne" && !is.null(inputs$data) && n > 20000) "pca" else "spectral"
  }
  Y0 <- ne_init(init, inputs$data, P, n, n_components, init_sdev, verbose)
  t_init <- proc.time()[["elapsed"]]

  # for "sampled" the cost is recorded at the end (every epoch from the start
  # when verbose), from the sums of the full gradient: exact while they are
  # cheap
  cost_kind <- if (n_components <= 2 && n > ne_exact_max_n(method)) "approx" else "exact"
  layout <- ne_layout_settings(
    if (sampled) "sampled" else "gradient_descent", max_iter,
    epoch = if (sampled && !verbose) 0L else epoch, rate = eta, callback = callback,
    callback_every = epoch, row_names = inputs$row_names, tol = tol,
    eta_exaggerated = eta_exaggerated, momentum = momentum, final_momentum = final_momentum,
    mom_switch_iter = mom_switch_iter, exaggeration = exaggeration,
    stop_lying_iter = stop_lying_iter, min_gain = min_gain,
    negative_sample_rate = negative_sample_rate, gamma = gamma,
    seed = if (sampled) draw_seed())
  ne_msg(verbose, "neighbor_embedding: optimizing (", if (sampled) "learning rate " else "eta ",
         signif(eta, 4), ", ", grad_kind, " gradient)")
  # the objective: the documented cost (for "sampled", with its own gamma,
  # for the costs recorded)
  cost <- cs
  if (sampled) cost$gamma <- cost_gamma
  cost <- ne_cost_list(cost, if (sampled) cost_kind else grad_kind)
  cost$density <- dens_cost_entry(dens, data_radii, max_iter, verbose)
  # P made here is seen by nothing else while the layout runs; when it is not
  # returned either, the layout may rewrite it for good (into the order in
  # which it reads it, at scale)
  returns_P <- isTRUE(ret_extra) || (is.character(ret_extra) && any(c("P", "fgraph", "radii") %in% ret_extra))
  P_access <- if (!is.null(inputs$P)) "read" else if (returns_P) "renumber" else "consume"
  res <- .optimize_layout(Y0, P, cost, layout, n_threads, verbose, simd_option(), P_access)
  t_end <- proc.time()[["elapsed"]]
  # P made here and not returned is freed now rather than at some later
  # collection, so that what the caller does next does not stack on it
  # (1.8 GB at 1e6 t-SNE points)
  if (P_access == "consume") {
    released <- held_bytes(P)
    P <- NULL
    collect_garbage(released)
  }
  if (verbose && !sampled && !res$converged && max_iter > 0) {
    ne_msg(verbose, "neighbor_embedding: stopped at max_iter = ", max_iter, " without ",
           if (tol > 0) paste0("converging (relative cost change above tol = ", tol, ")")
           else "a convergence test (tol = 0)")
  }
  Y <- res$Y
  dimnames(Y) <- list(inputs$row_names, NULL)
  if (ret_model) {
    if (is.null(index) && !is.null(inputs$data)) {
      # (small data whose affinities were over all pairs: the index alone)
      index <- ne_data_graph(inputs, ne_query_k(method, n, perplexity, n_neighbors) + 1L,
                             neighbors, n_threads, verbose, TRUE)$index
    }
    model <- ne_model(method, cost = if (sampled) utils::modifyList(cs, list(gamma = cost_gamma)) else cs,
                      gradient = grad_kind, embedding = unname(Y), index = index,
                      neighbors = neighbors, perplexity = perplexity,
                      n_neighbors = n_neighbors, eta = eta,
                      negative_sample_rate = negative_sample_rate, sample_gamma = gamma,
                      pca = inputs$pca)
  }
  # the model, when asked for, follows the embedding in every form of result
  head <- if (ret_model) list(embedding = Y, model = model) else list(embedding = Y)
  if (is.character(ret_extra)) {
    radii <- if ("radii" %in% ret_extra) dens_radii_result(data_radii, Y, P, cs, n_threads)
    return(c(head, list(nn = graph, P = P, fgraph = P, radii = radii)[ret_extra]))
  }
  if (!ret_extra) return(if (ret_model) head else Y)
  c(head, list(cost = res$cost, iterations = res$iterations,
       converged = res$converged, stopped = res$stopped,
       time = c(affinities = t_aff - t_start, init = t_init - t_aff,
                optimize = t_end - t_init, total = t_end - t_start),
       P = P, gradient = grad_kind, eta = eta,
       eta_exaggerated = if (sampled) NULL else eta_exaggerated, exaggeration = exaggeration,
       stop_lying_iter = stop_lying_iter, gamma = cs$gamma, eps = cs$eps, a = cs$a,
       b = cs$b))
}

# The arguments of neighbor_embedding() that PaCMAP and LocalMAP do not use.
ne_unused_by_pacmap <- c("perplexity", "neighbors", "exaggeration", "gradient", "stop_lying_iter",
                         "momentum", "final_momentum", "mom_switch_iter", "min_gain", "tol",
                         "init_sdev", "gamma", "eps", "weight", "alpha", "a", "b", "spread",
                         "min_dist", "negative_sample_rate", "dens_lambda", "dens_frac",
                         "dens_var_shift")

# The input affinities of resolve_inputs()'s points for t-SNE, LargeVis,
# UMAP and t-UMAP, and the graph they come from: the affinities given as
# `P` (ne_given_affinities()), or those of the graph (given, searched in the
# data, or read from the distances; with ret_model, the index of the data
# too). Returns list(P, graph, index); the graph NULL unless `keep_graph`
# (it is let go as soon as it has served: see below).
ne_affinities <- function(inputs, method, perplexity, n_neighbors, neighbors, n_threads,
                          verbose, ret_model, keep_graph = TRUE) {
  if (!is.null(inputs$P)) {
    return(list(P = ne_given_affinities(inputs$P, method), graph = NULL, index = NULL))
  }
  n <- inputs$n
  graph <- inputs$graph
  index <- NULL
  # (only the data make an index)
  ret_index <- ret_model && !is.null(inputs$data)
  if (method %in% c("tsne", "largevis")) {
    # all pairs up to 1,000 rows of data (of distances: a graph of every
    # point), else the 3 * perplexity nearest
    few <- n <= 1000 && neighbors == "knn"
    # (the all-pairs affinities of the data themselves are euclidean)
    by_graph <- !few || !is.null(inputs$distances) || !identical(inputs$metric, "euclidean")
    if (is.null(graph) && by_graph) {
      n_cols <- if (few) n else min(n, as.integer(ceiling(3 * perplexity)) + 1L)
      graph <- ne_data_graph(inputs, n_cols, neighbors, n_threads, verbose, ret_index)
      index <- graph$index
      graph <- graph$graph
    }
    ne_msg(verbose, "neighbor_embedding: perplexity calibration (perplexity ", perplexity, ")")
    if (is.null(graph)) {
      P <- perplexity_of_inputs(list(data = inputs$data, graph = NULL, n = n), perplexity,
                                n_threads, verbose)$P
    } else {
      # the graph goes before P is made: at 1e6 points of 90 neighbours the
      # graph (1.1 GB), the conditional rows (1.1 GB) and P (1.8 GB) would
      # otherwise be held at once
      rows <- perplexity_rows_of_graph(graph, perplexity, n_threads, verbose)
      if (!keep_graph) {
        released <- held_bytes(graph)
        graph <- NULL
        collect_garbage(released)
      }
      P <- symmetric_perplexity(rows, n_threads)
    }
  } else {
    if (is.null(graph)) {
      if (n_neighbors > n) {
        stop_arg("'n_neighbors' must be at most the number of points, ", n, " (it is ",
                 n_neighbors, ")")
      }
      graph <- ne_data_graph(inputs, n_neighbors, neighbors, n_threads, verbose, ret_index)
      index <- graph$index
      graph <- graph$graph
    }
    ne_msg(verbose, "neighbor_embedding: UMAP affinities")
    P <- umap_of_graph(graph, n_threads = n_threads, verbose = verbose)$V
  }
  list(P = P, graph = if (keep_graph) graph, index = index)
}

# R frees what it no longer references only when it collects, and the
# memory the core allocates (the layout's) never makes it collect: the large
# objects a run has let go (its neighbour graph, the conditional affinities)
# are freed here, before the next large allocation, rather than held to the
# end; and the C heap gives what the search's threads freed back to the
# system. A full collection costs time in proportion to the whole R heap
# (a tenth of a second in a test session, seconds beside a large Seurat
# object), so it runs only when what was let go is large.
collect_garbage <- function(released) {
  if (as.numeric(released) >= collect_garbage_min_bytes) {
    gc(verbose = FALSE)
    .trim_heap()
  }
  invisible()
}
collect_garbage_min_bytes <- 2^27

# Bytes held by `x` (a matrix, a sparse matrix, a list of them), for
# collect_garbage().
held_bytes <- function(x) as.numeric(utils::object.size(x))

# Affinities given as `P` (read_affinities()'s list), made what the method
# lays out: without the diagonal; for t-SNE and LargeVis scaled to sum to 1,
# as perplexity_affinities() gives them (a P that already does, to within
# 1e-9, is used as it is, so that its layout is the one of the data it was
# computed from); for UMAP and t-UMAP as they are, fuzzy memberships of at
# most 1.
ne_given_affinities <- function(affinities, method) {
  P <- affinities$P
  if (affinities$diagonal > 0) {
    Matrix::diag(P) <- 0
    P <- Matrix::drop0(P)
  }
  if (length(P@x) == 0 || max(P@x) <= 0) {
    stop_arg("'P' has no positive affinities between different points")
  }
  if (method %in% c("tsne", "largevis")) {
    total <- sum(P@x)
    if (abs(total - 1) > 1e-9) P@x <- P@x / total
  } else if (max(P@x) > 1) {
    stop_arg("'P' must hold fuzzy memberships between 0 and 1 for method = \"", method,
             "\" (its largest affinity is ", show_value(max(P@x)), "): give the output of ",
             "umap_affinities(), or scale P")
  }
  P
}

# The layout settings as the glue reads them (layout_settings() of
# src/r_driver.h; src/pacmap.cpp reads PaCMAP's schedule from them too),
# the one place they are built: the
# stepper ("gradient_descent", "sampled" or "adam"), max_iter, epoch
# (steps between cost records; 0: the final cost alone), `rate` (the step
# size eta, or the learning rate), the callback (called every
# callback_every steps with the layout, its rows named `row_names`), and
# the stepper's own settings, whose defaults are neighbor_embedding()'s (and,
# for "adam", those of placing new points: a constant last phase); "sampled"
# takes the `seed` its caller drew (draw_seed()).
ne_layout_settings <- function(stepper, max_iter, epoch, rate, callback = NULL,
                               callback_every = epoch, row_names = NULL, tol = 1e-7,
                               eta_exaggerated = rate, momentum = 0.5, final_momentum = 0.8,
                               mom_switch_iter = 250L, exaggeration = 1, stop_lying_iter = 0L,
                               min_gain = 0.01, negative_sample_rate = 5L, gamma = 1,
                               phases = c(0L, 0L, max_iter), local = FALSE,
                               low_dist_thres = 10, constant = TRUE, seed = NULL) {
  driver <- list(stepper = stepper, max_iter = as.integer(max_iter), epoch = as.integer(epoch),
                 callback = ne_callback(callback, row_names, max_iter),
                 callback_every = as.integer(callback_every))
  c(driver, switch(stepper,
    gradient_descent = list(tol = tol, eta = rate, eta_exaggerated = eta_exaggerated,
                            momentum = momentum, final_momentum = final_momentum,
                            mom_switch_iter = mom_switch_iter, exaggeration = exaggeration,
                            stop_lying_iter = stop_lying_iter, min_gain = min_gain),
    sampled = list(learning_rate = rate, negative_sample_rate = negative_sample_rate,
                   gamma = gamma, seed = seed),
    adam = list(learning_rate = rate, phases = as.integer(phases), local = local,
                low_dist_thres = low_dist_thres, constant = constant)
  ))
}

# `callback` of neighbor_embedding() and neighbor_embedding_transform():
# NULL or a function of two arguments, (iteration, Y), or of three, uwot's
# (epoch, n_epochs, Y). Its form is checked here, before the run, so that a
# wrong one is not found at the first call.
check_callback <- function(callback) {
  if (is.null(callback)) return(NULL)
  if (!is.function(callback)) {
    stop_arg("'callback' must be a function(iteration, Y), a function(epoch, n_epochs, Y) ",
             "as uwot's epoch_callback, or NULL (it is ", what_is(callback), ")")
  }
  callback_arity(callback)
  callback
}

# How a callback is called: 2 (iteration, Y) or 3 (epoch, n_epochs, Y), from
# its formal arguments; a function of `...` alone takes the two.
callback_arity <- function(callback) {
  f <- formals(if (is.primitive(callback)) args(callback) else callback)
  named <- setdiff(names(f), "...")
  dots <- "..." %in% names(f)
  if (length(named) == 3) return(3L)
  if (length(named) == 2 || (dots && length(named) < 2)) return(2L)
  stop_arg("'callback' must take two arguments, (iteration, Y), or three as uwot's ",
           "epoch_callback, (epoch, n_epochs, Y); it takes ", length(named),
           if (length(named) > 0) paste0(" (", paste(named, collapse = ", "), ")"))
}

# The callback as the glue calls it (src/r_driver.h): function(iteration, Y)
# with Y the layout so far (an n x d matrix, the points' row names added),
# returning TRUE when the user's callback returned FALSE, which stops the
# run. The user's callback gets uwot's (epoch, n_epochs, Y) when it takes
# three arguments. An error in the callback stops the run with an error
# that names it.
ne_callback <- function(callback, row_names, max_iter) {
  if (is.null(callback)) return(NULL)
  three <- callback_arity(callback) == 3L
  function(iteration, Y) {
    if (!is.null(row_names)) rownames(Y) <- row_names
    out <- tryCatch(if (three) callback(iteration, max_iter, Y) else callback(iteration, Y),
                    error = function(e) {
      if (is_time_limit(e)) stop(e)
      stop_arg("'callback' failed at iteration ", iteration, ": ", conditionMessage(e))
    })
    isFALSE(out)
  }
}

# The gradient actually used by "auto": for LargeVis, UMAP and t-UMAP,
# negative sampling at every size, as uwot and umap-learn lay them out (the
# full gradient's minimum is a much wider layout, bench/README.md "First
# tries"); for t-SNE the exact sum up to ne_tsne_exact_max_n() points (or in
# more than 2 dimensions, where the grid has no approximation), then the
# grid's.
ne_gradient_kind <- function(gradient, method, n, n_components) {
  if (gradient != "auto") return(gradient)
  if (method != "tsne") return("sampled")
  if (n_components <= 2 && n > ne_tsne_exact_max_n()) "approx" else "exact"
}

# Above this many points t-SNE's "auto" gradient is the grid's: where a
# whole default run by the approximation takes no longer than by the exact
# sum (bench/README.md "First tries").
ne_tsne_exact_max_n <- function() 3000L

# Epochs of a negative-sampling layout: 500 up to 10,000 points (as uwot),
# then as many as keep the work of 10,000 points at 500 epochs (so that no
# larger input takes less time), down to uwot's 200 from 25,000 points.
ne_sampled_epochs <- function(n) {
  if (n <= 10000) 500L else max(200L, as.integer(round(5e6 / n)))
}

# The approximation's grid from the option lsnn.grid (for measurements; see
# ?cost_gradient): NULL when unset (the core's defaults), else the named
# list of every field, those not given taken from the default grid of the
# cost `kind` (ne_cost_settings()'s method: "tsne", "largevis",
# "largevis_exp", "umap"). Each field is checked against what the core
# (src/costs.cpp, inst/include/lsnn/farfield/) makes of it, so that no
# accepted value asks for an absurd grid: the interpolation nodes per box
# (at most 32, the core's limit) times the minimum boxes per dimension at
# most 2,048 nodes per dimension (the finest grid the planner refines to);
# the boxes that points_per_box asks for at most 4 grid nodes per point; a
# near field at most 8 boxes deep. The box width sets the boxes from the
# layout's range, which the core caps at 6,000 nodes per dimension.
ne_grid_option <- function(kind) {
  g <- getOption("lsnn.grid")
  if (is.null(g)) return(NULL)
  fields <- ne_grid_fields()
  bad <- function(...) stop("option 'lsnn.grid' ", ..., " (see ?cost_gradient)", call. = FALSE)
  if (!(is.list(g) || is.atomic(g)) || length(g) == 0 || is.null(names(g)) ||
      anyNA(names(g)) || any(names(g) == "")) {
    bad("must be NULL or a named list of grid fields (", paste(fields, collapse = ", "), ")")
  }
  unknown <- setdiff(names(g), fields)
  if (length(unknown) > 0) {
    bad("has an unknown field '", unknown[1], "'; its fields are ", paste(fields, collapse = ", "))
  }
  twice <- names(g)[duplicated(names(g))]
  if (length(twice) > 0) bad("names the field '", twice[1], "' twice")
  grid <- utils::modifyList(.far_field_defaults(kind), as.list(g))
  field <- function(name, ok, what) {
    if (!name %in% names(g)) return(invisible())
    x <- g[[name]]
    if (!(is.numeric(x) || is.logical(x)) || length(x) != 1 || is.na(x) || !ok(as.numeric(x))) {
      bad("has field '", name, "' = ", show_value(x), "; it must be ", what)
    }
  }
  whole_in <- function(lo, hi) function(x) is_scalar_number(x, min = lo, max = hi, whole = TRUE)
  flag <- function(x) x %in% c(0, 1)
  non_negative <- function(x) is_scalar_number(x, min = 0)
  nodes <- as.numeric(grid$nodes)
  field("nodes", whole_in(1, 32), "a whole number from 1 to 32")
  field("box_width", function(x) x >= 0.05, "at least 0.05 (Inf: the boxes follow the points)")
  max_boxes <- floor(2048 / nodes)
  field("min_boxes", whole_in(1, max_boxes),
        paste0("a whole number from 1 to ", max_boxes, " (at most 2,048 nodes per dimension ",
               "with ", nodes, " nodes per box)"))
  field("near_field", flag, "TRUE or FALSE")
  min_points <- nodes^2 / 4
  field("points_per_box", function(x) x == 0 || (is.finite(x) && x >= min_points),
        paste0("0 or at least nodes^2 / 4 = ", show_value(min_points),
               " (at most 4 grid nodes per point)"))
  field("near_boxes", whole_in(1, 8), "a whole number from 1 to 8")
  field("pair_weight", non_negative, "a finite number of at least 0")
  field("smooth_width", non_negative, "a finite number of at least 0")
  field("by_components", flag, "TRUE or FALSE")
  field("shallow_width", non_negative, "a finite number of at least 0")
  field("fine_nodes", whole_in(0, 32), "a whole number from 0 to 32")
  field("fine_smooth_width", non_negative, "a finite number of at least 0")
  field("memory_mb", function(x) is.finite(x) && x >= 1, "a finite number of at least 1")
  # a field left to its default may not fit the fields given
  if (!"min_boxes" %in% names(g) && grid$min_boxes > max_boxes) {
    bad("has nodes = ", nodes, ", too many for the default min_boxes = ", grid$min_boxes)
  }
  if (!"points_per_box" %in% names(g) && grid$points_per_box != 0 &&
      grid$points_per_box < min_points) {
    bad("has nodes = ", nodes, ", too many for the default points_per_box = ",
        grid$points_per_box, " (give points_per_box of at least ", show_value(min_points), ")")
  }
  list(nodes = as.integer(grid$nodes), box_width = as.numeric(grid$box_width),
       min_boxes = as.integer(grid$min_boxes), near_field = as.logical(grid$near_field),
       points_per_box = as.numeric(grid$points_per_box),
       near_boxes = as.integer(grid$near_boxes), pair_weight = as.numeric(grid$pair_weight),
       smooth_width = as.numeric(grid$smooth_width),
       by_components = as.logical(grid$by_components),
       shallow_width = as.numeric(grid$shallow_width), fine_nodes = as.integer(grid$fine_nodes),
       fine_smooth_width = as.numeric(grid$fine_smooth_width),
       memory_mb = as.numeric(grid$memory_mb))
}

# The fields of options(lsnn.grid), in the order ?cost_gradient lists them.
ne_grid_fields <- function() {
  c("nodes", "box_width", "min_boxes", "near_field", "points_per_box", "near_boxes",
    "pair_weight", "smooth_width", "by_components", "shallow_width", "fine_nodes",
    "fine_smooth_width", "memory_mb")
}

# Largest n for which gradient = "auto" sums all pairs (bench/README.md):
# where one exact and one approximate evaluation cost about the same (measured
# in one process, 2 threads, n = 2,000 to 20,000).
ne_exact_max_n <- function(method) {
  switch(method, tsne = 20000L, umap = 2000L, tumap = 7000L, largevis = 5000L, 10000L)
}

# The neighbours of the data's rows, a graph of `n_cols` columns (the row
# itself first): the nearest ("knn", by the one search rule of
# graph_of_inputs()) or the locally scaled ones ("lsnn"); with `ret_index`
# also the index that places new rows (neighbor_embedding_transform()).
ne_data_graph <- function(inputs, n_cols, neighbors, n_threads, verbose, ret_index) {
  if (!is.null(inputs$distances)) {
    if (neighbors == "knn") {
      return(list(graph = graph_of_inputs(inputs, n_cols, n_threads, verbose,
                                          "neighbor_embedding"), index = NULL))
    }
    # as locally_scaled_knn(): the locally scaled among 50 extra candidates
    n_near <- max(1L, min(n_cols, inputs$n - 1L))
    enn <- graph_of_inputs(inputs, n_near + 51L, n_threads, verbose, "neighbor_embedding")
    return(list(graph = enn_to_lsnn(enn, n_near, n_extra = 51L, n_threads = n_threads),
                index = NULL))
  }
  if (neighbors == "knn" && !ret_index) {
    return(list(graph = graph_of_inputs(inputs, n_cols, n_threads, verbose,
                                        "neighbor_embedding"), index = NULL))
  }
  metric <- if (is.null(inputs$metric)) "euclidean" else inputs$metric
  kind <- search_kind(inputs$n)
  ne_msg(verbose, "neighbor_embedding: ", kind, " ", n_cols - 1L, "-nearest ",
         if (neighbors == "lsnn") "locally scaled ", "neighbours")
  X <- dense_or_rows(inputs$data)
  res <- if (neighbors == "knn") {
    extended_knn(X, n_neighbors = n_cols - 1L, n_extra = 0, n_threads = n_threads,
                 nn_kind = kind, verbose = verbose, ret_index = ret_index, metric = metric)
  } else {
    locally_scaled_knn(X, n_neighbors = n_cols, n_threads = n_threads, nn_kind = kind,
                       verbose = verbose, ret_index = ret_index, metric = metric)
  }
  if (!ret_index) return(list(graph = res, index = NULL))
  list(graph = if (neighbors == "knn") res$enn else res$lsnn, index = res$index)
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
    return(spread_collapsed(unname(Y), "'init'"))
  }
  if (!is.character(init) || length(init) != 1 ||
      !init %in% c("spectral", "pca", "random")) {
    stop_arg("'init' must be \"spectral\", \"pca\", \"random\" or a matrix")
  }
  if (init == "pca" && is.null(data)) {
    stop_arg("'init' = \"pca\" needs the data as 'X', not only a graph, distances or affinities")
  }
  ne_msg(verbose, "neighbor_embedding: ", init, " initialisation")
  Y <- switch(init,
    random = matrix(stats::rnorm(n * k), n, k),
    pca = ne_pca(dense_data(data), k),
    spectral = ne_spectral(P, k)
  )
  if (is.null(Y)) {
    fallback <- if (is.null(data)) "random" else "pca"
    warning(sprintf("spectral initialisation failed; using \"%s\"", fallback), call. = FALSE)
    Y <- if (is.null(data)) matrix(stats::rnorm(n * k), n, k) else ne_pca(dense_data(data), k)
  }
  Y <- sweep(Y, 2, colMeans(Y))
  s <- stats::sd(Y[, 1])
  if (!is.finite(s) || s <= 0) s <- 1
  Y <- Y * (init_sdev / s)
  if (!all_finite(Y) || max(abs(Y)) > 1e100) {
    stop_arg("'init_sdev' (", init_sdev, ") is too large: the initial coordinates would ",
             "exceed 1e100")
  }
  spread_collapsed(Y, paste0("the ", init, " start"))
}

# A start with more than half of its points on one spot: coincident points
# feel the same forces from every other point, so a start with all points
# on one spot never moves, and a large coincident group separates only
# slowly. Such points are moved by a tiny Gaussian jitter (from R's
# generator), with a warning.
spread_collapsed <- function(Y, what) {
  n <- nrow(Y)
  group <- largest_coincident_group(Y)
  if (length(group) <= n / 2) return(Y)
  others <- Y[-group, , drop = FALSE]
  scale <- if (nrow(others) > 0) max(abs(sweep(others, 2, Y[group[1], ]))) else 0
  sdev <- if (scale > 0) 1e-4 * scale else 1e-4 * max(1, max(abs(Y[group[1], ])))
  warning(what, " puts ", length(group), " of the ", n, " points on one spot; ",
          "they were spread by a random jitter of sd ", signif(sdev, 3),
          " (give distinct starting points to avoid it)", call. = FALSE)
  Y[group, ] <- Y[group, , drop = FALSE] +
    matrix(stats::rnorm(length(group) * ncol(Y), sd = sdev), length(group))
  Y
}

# The rows of the largest set of identical rows of Y, in O(n log n).
largest_coincident_group <- function(Y) {
  o <- do.call(order, unname(as.data.frame(Y)))
  Z <- Y[o, , drop = FALSE]
  same <- c(FALSE, rowSums(Z[-1, , drop = FALSE] != Z[-nrow(Z), , drop = FALSE]) == 0)
  run <- cumsum(!same)
  sizes <- tabulate(run)
  o[run == which.max(sizes)]
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
  if (requireNamespace("irlba", quietly = TRUE) && min(dim(X)) > 3 * kk + 10) {
    # irlba centres implicitly: a centred copy of 70,000 x 784 took 3.9 s,
    # the whole decomposition 1.2 s
    s <- irlba::irlba(X, nv = kk, center = colMeans(X))
    Y <- s$u %*% diag(s$d[seq_len(kk)], kk)
  } else {
    s <- svd(sweep(X, 2, colMeans(X)), nu = kk, nv = 0)
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
  # (RSpectra's eigs_sym() takes a general sparse matrix, not a dsCMatrix)
  M <- methods::as(Matrix::forceSymmetric(Dh %*% A %*% Dh), "generalMatrix")
  V <- NULL
  if (n <= 200) {
    V <- eigen(as.matrix(M), symmetric = TRUE)$vectors[, seq_len(k + 1), drop = FALSE]
  } else {
    if (requireNamespace("RSpectra", quietly = TRUE)) {
      res <- value_or(
        suppressWarnings(RSpectra::eigs_sym(
          M, k + 1, which = "LA",
          opts = list(tol = 1e-4, maxitr = 2000, ncv = min(n, max(2 * (k + 1) + 1, 20)),
                      initvec = stats::rnorm(n)))),
        NULL)
      if (!is.null(res) && res$nconv >= k + 1) V <- res$vectors[, seq_len(k + 1)]
    }
    if (is.null(V) && requireNamespace("irlba", quietly = TRUE)) {
      # M + I is positive semi-definite: its top singular vectors are M's
      # top eigenvectors
      res <- value_or(
        suppressWarnings(irlba::partial_eigen(M + Matrix::Diagonal(n), n = k + 1,
                                              symmetric = TRUE)),
        NULL)
      if (!is.null(res)) V <- res$vectors[, seq_len(k + 1)]
    }
  }
  if (is.null(V) || anyNA(V)) return(NULL)
  v0 <- sqrt(deg) / sqrt(sum(deg))
  V <- V - v0 %*% crossprod(v0, V)
  V <- svd(V, nu = k, nv = 0)$u
  ne_fix_signs(V)
}
