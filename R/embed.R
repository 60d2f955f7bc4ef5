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
#' the end (and every `epoch` epochs with `verbose = TRUE`). From 50,000
#' points the layout runs with the points renumbered so that neighbours are
#' near in memory (faster at scale, densMAP most); the rows, the callback's
#' layout and every extra come back in the order of `X`.
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
#' 10,000, without a drop in time at 10,000), `eta = 1` (6 for densMAP),
#' `gamma = 1` (7 for LargeVis), `init_sdev = 2`. Each edge pulls each of its
#' ends once per `max(P) / p_ij` epochs, where uwot and umap-learn pull twice
#' (once from each direction of the edge): `gamma = 1` here weighs the pushes
#' against the pulls as their `repulsion_strength = 2` does (`gamma = 0.5`
#' gives their balance; `bench/README.md` compares the two). How each default was
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
                  metric = "euclidean", y = NULL, target_weight = 0.5,
                  target_n_neighbors = NULL, target_metric = "euclidean", densmap = FALSE,
                  dens_lambda = NULL, dens_frac = 0.3, dens_var_shift = 0.1) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
  t_start <- proc.time()[["elapsed"]]
  # (before any argument is assigned, which makes missing() FALSE)
  given <- names(match.call())[-1]
  a <- ne_check_args(mget(setdiff(names(formals()), c("X", "nn_method", "P", "seed"))), given)
  # (the call's one seed: each random step derives its own, R/seeds.R)
  a$seed <- draw_seed()
  # (the inputs are passed on without a binding here, so that a method can
  # free the rows it read or reduced once it no longer needs them)
  run <- get(a$entry$run, mode = "function")
  ne_result(run(ne_inputs(X, nn_method, P, a), a, t_start), a)
}

# neighbor_embedding()'s arguments (but the inputs) checked, in the order
# they are read, with the method's table entry (ne_methods()) as `entry`,
# in an environment.
# A method warns of the arguments it does not use that were `given`.
ne_check_args <- function(a, given) {
  a$method <- choice_arg(a$method, names(ne_methods()), "method")
  entry <- ne_methods()[[a$method]]
  a$gradient <- choice_arg(a$gradient, c("auto", "exact", "approx", "sampled"))
  if (a$gradient == "sampled" && !entry$sampled) {
    stop_arg("'gradient' = \"sampled\" is for \"largevis\", \"umap\" and \"tumap\": ",
             "t-SNE's normalisation needs every pair (use \"approx\")")
  }
  a$n_threads <- check_n_threads(a$n_threads)
  a$perplexity <- check_number(a$perplexity, "perplexity", min = 1, above = TRUE)
  a$metric <- check_choice(a$metric, "metric", knn_metrics)
  unused <- intersect(given, entry$unused)
  if (length(unused) > 0) {
    warning("not used by method = \"", a$method, "\": ",
            paste0("'", unused, "'", collapse = ", "),
            " (PaCMAP and LocalMAP lay out near, mid-near and further pairs by Adam; ",
            "see ?neighbor_embedding)", call. = FALSE)
  }
  if (!is.null(a$n_neighbors)) {
    a$n_neighbors <- check_whole(a$n_neighbors, "n_neighbors", min = entry$min_neighbors)
  } else {
    a["n_neighbors"] <- list(entry$n_neighbors)
  }
  a <- ne_check_numbers(a)
  a$ret_extra <- check_ret_extra(a$ret_extra, c("nn", "P", "fgraph", "pairs", "radii"),
                                 entry$extras, a$method)
  # (densMAP and den-SNE: R/density.R)
  a["dens"] <- list(dens_settings(a$densmap, a$dens_lambda, a$dens_frac, a$dens_var_shift,
                                  a$method))
  a$neighbors <- choice_arg(a$neighbors, c("knn", "lsnn"), "neighbors")
  a$ret_model <- check_flag(a$ret_model, "ret_model")
  a$mn_ratio <- check_number(a$mn_ratio, "mn_ratio", min = 0)
  a$fp_ratio <- check_number(a$fp_ratio, "fp_ratio", min = 0)
  a$phases <- check_phases(a$phases)
  a$low_dist_thres <- check_number(a$low_dist_thres, "low_dist_thres", min = 0, above = TRUE)
  a["pca"] <- list(check_pca(a$pca))
  a$pca_center <- check_flag(a$pca_center, "pca_center")
  a["callback"] <- list(check_callback(a$callback))
  # (labels or targets of a supervised layout: R/supervised.R)
  a["target"] <- list(check_target(a$y, a$target_weight, a$target_n_neighbors,
                                   a$target_metric, a$method, a$n_neighbors))
  # (a step size without a default that depends on the data, as PaCMAP's,
  # is checked with the other arguments)
  if (is.null(entry$eta) && !is.null(a$eta)) {
    a$eta <- check_number(a$eta, "eta", min = 0, above = TRUE)
  }
  a$entry <- entry
  # (an environment: `$` on a list would match a removed NULL setting, such
  # as `pca`, to another that begins with its name)
  list2env(a, envir = new.env(parent = emptyenv()))
}

# The numeric settings of the optimizers that have no data-dependent
# default, checked.
ne_check_numbers <- function(a) {
  a$n_components <- check_whole(a$n_components, "n_components", min = 1)
  if (!is.null(a$max_iter)) a$max_iter <- check_whole(a$max_iter, "max_iter", min = 0)
  a$momentum <- check_number(a$momentum, "momentum", min = 0, max = 1, below = TRUE)
  a$final_momentum <- check_number(a$final_momentum, "final_momentum", min = 0, max = 1,
                                   below = TRUE)
  a$mom_switch_iter <- check_whole(a$mom_switch_iter, "mom_switch_iter", min = 0)
  a$min_gain <- check_number(a$min_gain, "min_gain", min = 0)
  a$tol <- check_number(a$tol, "tol", min = 0)
  a$epoch <- check_whole(a$epoch, "epoch", min = 1)
  if (!is.null(a$init_sdev)) {
    a$init_sdev <- check_number(a$init_sdev, "init_sdev", min = 0, above = TRUE)
  }
  a$negative_sample_rate <- check_whole(a$negative_sample_rate, "negative_sample_rate", min = 1,
                                        max = 1000)
  a$verbose <- check_flag(a$verbose, "verbose")
  a
}

# The points neighbor_embedding() lays out (resolve_inputs()'s list, reduced
# by `pca`): the data, a graph, distances or affinities; or a shard set's
# rows and graph, which only PaCMAP and LocalMAP lay out.
ne_inputs <- function(X, nn_method, P, a) {
  if (inherits(X, "lsnn_shards")) {
    if (!is.null(P)) stop_arg("give the affinities as 'P' or a shard set as 'X', not both")
    if (a$ret_model) {
      stop_arg("'ret_model' = TRUE is not available for sharded 'X' (a model keeps its data)")
    }
    return(reduce_inputs(pacmap_shard_inputs(X, nn_method, a$method, a$verbose, a$n_neighbors),
                         a$pca, a$pca_center, a$n_threads, a$verbose, "neighbor_embedding",
                         default = pacmap_default_pca))
  }
  inputs <- resolve_inputs(X, nn_method, "neighbor_embedding", metric = a$metric, P = P,
                           embedding = TRUE, n_threads = a$n_threads)
  inputs$metric <- a$metric
  n <- inputs$n
  if (n < 3) stop_arg("at least 3 points are needed (there are ", n, ")")
  check_target_rows(a$target, n)
  if (a$n_components > n) {
    stop_arg("'n_components' must be at most the number of points, ", n,
             " (it is ", a$n_components, ")")
  }
  reduce_inputs(inputs, a$pca, a$pca_center, a$n_threads, a$verbose, "neighbor_embedding",
                default = if (a$metric %in% pca_metrics) a$entry$default_pca,
                metric = a$metric)
}

# What neighbor_embedding() returns, from a method's run: list(Y, model,
# extras, details), `extras` the named objects `ret_extra` may ask for,
# `details` what ret_extra = TRUE adds. The model, when asked for, follows
# the embedding in every form of result.
ne_result <- function(run, a) {
  head <- if (a$ret_model) list(embedding = run$Y, model = run$model) else list(embedding = run$Y)
  if (is.character(a$ret_extra)) return(c(head, run$extras[a$ret_extra]))
  if (!a$ret_extra) return(if (a$ret_model) head else run$Y)
  c(head, run$details)
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

ne_msg <- function(verbose, ...) {
  if (verbose) message(...)
}
