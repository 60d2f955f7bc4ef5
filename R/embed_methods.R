# The table of neighbor_embedding()'s methods: each method's defaults, the
# extras it returns, the arguments it ignores, and the function that runs
# it. A new method is a file with its run function and one line here.

# The methods, one entry each (ne_method()). t-SNE's 750 iterations are
# openTSNE's and FIt-SNE's; its eta n / exaggeration in each phase is
# openTSNE's rule; UMAP's and t-UMAP's full-gradient step 0.03 is the best
# measured of 0.003 to 1 (bench/README.md, "How the defaults were chosen").
ne_methods <- function() {
  list(
    tsne = ne_method("tsne", "ne_run_affinities", max_iter = 750L, eta = function(n) n,
                     exaggeration = 12, sampled = FALSE, cost_exact_max_n = 20000L,
                     start = function(n, has_data) if (has_data && n > 20000) "pca" else "spectral"),
    largevis = ne_method("largevis", "ne_run_affinities", extras = c("nn", "P", "fgraph"),
                         eta = function(n) n / 20,
                         exaggeration = 4, cost_exact_max_n = 5000L,
                         cost_gamma = function(n) 1 / (10 * n), sampled_gamma = 7),
    umap = ne_method("umap", "ne_run_affinities", cost_exact_max_n = 2000L),
    tumap = ne_method("tumap", "ne_run_affinities", cost_exact_max_n = 7000L),
    pacmap = ne_method("pacmap", "ne_pacmap", extras = c("nn", "pairs"),
                       unused = ne_unused_by_pacmap, min_neighbors = 1L, n_neighbors = NULL,
                       eta = NULL, default_pca = pacmap_default_pca),
    localmap = ne_method("localmap", "ne_pacmap", extras = c("nn", "pairs"),
                         unused = ne_unused_by_pacmap, min_neighbors = 1L, n_neighbors = NULL,
                         eta = NULL, default_pca = pacmap_default_pca)
  )
}

# One method's entry: `run`, the name of the function that lays it out from
# the inputs and the checked arguments (function(inputs, a, t_start),
# returning what ne_result() assembles); the extras `ret_extra` may name;
# the arguments it does not use (a warning when given); the fewest
# neighbours it takes and their default (NULL: the method's own rule); the
# reduction of the data by default (a function of the data, as
# reduce_inputs() takes it, or NULL); and, for the methods of input
# affinities, the defaults of the full-gradient layout (max_iter, eta as a
# function of n, or NULL for a step that does not depend on the data,
# exaggeration), whether negative sampling may lay it out, the largest n
# whose recorded costs sum all pairs, the cost's repulsion weight (gamma, a
# function of n) and that of one sampled repulsion, and the start when
# `init` is not given.
ne_method <- function(name, run, extras = c("nn", "P", "fgraph", "radii"), unused = character(),
                      min_neighbors = 2L, n_neighbors = 15L, default_pca = NULL,
                      max_iter = 1000L, eta = function(n) 0.03,
                      exaggeration = 1, sampled = TRUE, cost_exact_max_n = 10000L,
                      cost_gamma = function(n) 1, sampled_gamma = 1,
                      start = function(n, has_data) "spectral") {
  list(name = name, run = run, extras = extras, unused = unused, min_neighbors = min_neighbors,
       n_neighbors = n_neighbors, default_pca = default_pca,
       max_iter = max_iter, eta = eta, exaggeration = exaggeration, sampled = sampled,
       cost_exact_max_n = cost_exact_max_n, cost_gamma = cost_gamma,
       sampled_gamma = sampled_gamma, start = start)
}

# The arguments of neighbor_embedding() that PaCMAP and LocalMAP do not use.
ne_unused_by_pacmap <- c("perplexity", "neighbors", "exaggeration", "gradient", "stop_lying_iter",
                         "momentum", "final_momentum", "mom_switch_iter", "min_gain", "tol",
                         "init_sdev", "gamma", "eps", "weight", "alpha", "a", "b", "spread",
                         "min_dist", "negative_sample_rate", "target_weight",
                         "target_n_neighbors", "target_metric", "dens_lambda",
                         "dens_frac", "dens_var_shift")

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

