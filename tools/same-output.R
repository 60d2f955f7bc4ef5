# Saves, or compares with a saved copy, the outputs of a fixed set of calls
# that reach every part of the C++ core (kNN searches on each kind of data and
# metric, queries, local scaling, graphs, quality, PCA, the exact and
# far-field t-SNE, UMAP, PaCMAP), so that a refactor can show that it changes
# no output: identical() on every result.
#
#   R_LIBS=<library> Rscript tools/same-output.R save    <file.rds>
#   R_LIBS=<library> Rscript tools/same-output.R compare <file.rds>
#
# compare exits with status 1 when any result differs.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2 || !args[1] %in% c("save", "compare")) {
  stop("usage: Rscript tools/same-output.R save|compare <file.rds>", call. = FALSE)
}
suppressPackageStartupMessages(library(lsnn))
threads <- 2L

make_inputs <- function() {
  # (enough rows that the approximate searches and queries run as such, not
  # by their exact fallback for small data)
  set.seed(42)
  n <- 2500
  centres <- matrix(rnorm(6 * 20, sd = 4), 6)
  dense <- centres[sample(6, n, TRUE), ] + matrix(rnorm(n * 20), n)
  # (sparse enough that the approximate search keeps it sparse too)
  sparse_values <- matrix(rbinom(n * 1500, 1, 0.004) * rexp(n * 1500), n)
  sparse <- methods::as(Matrix::Matrix(sparse_values, sparse = TRUE), "RsparseMatrix")
  binary <- matrix(rbinom(n * 96, 1, 0.3) == 1, n)
  big <- centres[sample(6, 4000, TRUE), 1:10] + matrix(rnorm(4000 * 10), 4000)
  list(dense = dense, sparse = sparse, binary = binary, big = big)
}

knn_calls <- function(x) {
  out <- list()
  searches <- list(
    dense = list(x$dense, c("euclidean", "cosine", "correlation", "manhattan")),
    sparse = list(x$sparse, c("euclidean", "cosine")),
    binary = list(x$binary, "hamming"))
  for (form in names(searches)) {
    data <- searches[[form]][[1]]
    for (metric in searches[[form]][[2]]) {
      for (kind in c("exact", "approx")) {
        out[[paste("knn", form, metric, kind)]] <- extended_knn(
          data, n_neighbors = 12, n_extra = 8, nn_kind = kind, metric = metric,
          n_threads = threads, seed = 7)
      }
    }
  }
  out$knn_pca <- extended_knn(x$dense, n_neighbors = 10, n_extra = 5, nn_kind = "exact",
                              pca = 5, n_threads = threads)
  out
}

query_calls <- function(x) {
  out <- list()
  train <- seq(1, nrow(x$dense), by = 3)
  for (form in c("dense", "sparse", "binary")) {
    data <- x[[form]]
    metric <- if (form == "binary") "hamming" else "euclidean"
    built <- extended_knn(data[train, ], n_neighbors = 10, n_extra = 5, nn_kind = "exact",
                          metric = metric, ret_index = TRUE, n_threads = threads)
    out[[paste("index graph", form)]] <- built$enn
    for (kind in c("exact", "approx")) {
      out[[paste("query", form, kind)]] <- extended_knn_query(
        built$index, data[-train, ], n_neighbors = 8, nn_kind = kind, n_threads = threads,
        seed = 3)
      out[[paste("lsnn query", form, kind)]] <- locally_scaled_knn_query(
        built$index, data[-train, ], n_neighbors = 6, n_extra = 4, nn_kind = kind,
        n_threads = threads, seed = 3)
    }
  }
  out
}

graph_calls <- function(x, knn) {
  out <- list()
  for (kind in c("exact", "approx")) {
    out[[paste("lsnn", kind)]] <- locally_scaled_knn(x$dense, n_neighbors = 10, n_extra = 20,
                                                      nn_kind = kind, n_threads = threads,
                                                      seed = 5)
  }
  out$lsnn_sparse <- locally_scaled_knn(x$sparse, n_neighbors = 10, n_extra = 10,
                                        nn_kind = "exact", n_threads = threads)
  enn <- knn[["knn dense euclidean exact"]]
  out$enn_to_lsnn <- enn_to_lsnn(enn, n_neighbors = 8, n_extra = 10, n_threads = threads)
  out$scaled_distances <- locally_scaled_distances(enn$idx, enn$dist)
  out$sorted <- sort_knn_graph(knn[["knn dense euclidean approx"]])
  out$truncated <- truncate_graph(enn, 6)
  out$overlap <- neighbor_overlap(knn[["knn dense euclidean approx"]], enn)
  out$perplexity <- perplexity_affinities(nn_method = enn, perplexity = 5, n_threads = threads)
  out$umap_affinities <- umap_affinities(nn_method = enn, n_threads = threads)
  out
}

quality_calls <- function(x) {
  Y <- x$dense[, 1:2] + 0.5 * x$dense[, 3:4]
  set.seed(11)
  list(
    quality = embedding_quality(x$dense, Y, k = 10, n_points = 300, n_triplets = 5000,
                                n_threads = threads),
    quality_cosine = embedding_quality(x$dense, Y, k = 10, n_points = 300, n_triplets = 5000,
                                       metric = "cosine", n_threads = threads),
    preservation = neighbor_preservation(x$dense, Y, k = 10, n_threads = threads),
    trust = trustworthiness(x$dense, Y, k = 10, n_points = 200, n_threads = threads),
    continuity = continuity(x$dense, Y, k = 10, n_points = 200, n_threads = threads),
    triplets = random_triplet_accuracy(x$dense, Y, n_triplets = 4000, n_threads = threads),
    correlation = distance_correlation(x$dense, Y, n_pairs = 4000, n_threads = threads))
}

pca_calls <- function(x) {
  data <- lsnn:::prepare_data(x$dense, "euclidean")
  list(
    pca_scores = lsnn:::pca_scores(x$dense, 5, n_threads = threads),
    pca_uncentred = lsnn:::pca_scores(x$dense, 5, n_threads = threads, center = FALSE),
    pca_components = lsnn:::pca_components(data, 4, threads, FALSE))
}

embed_calls <- function(x) {
  set.seed(9)
  Y_big <- matrix(rnorm(4000 * 2), 4000)
  # clusters far apart (the plan splits the layout into components), and a
  # core with a thin halo strewn far around it (a halo shed, outliers)
  Y_clusters <- Y_big + 40 * (x$big[, 1:2] > 0)
  Y_halo <- rbind(Y_big[1:3970, ], matrix(runif(60, -300, 300), 30))
  P <- perplexity_affinities(x$big, perplexity = 10, n_threads = threads)
  list(
    tsne_exact = neighbor_embedding(x$dense, method = "tsne", max_iter = 30, stop_lying_iter = 10,
                                    gradient = "exact", n_threads = threads, seed = 1),
    tsne_far_field = neighbor_embedding(x$big, method = "tsne", max_iter = 20, stop_lying_iter = 10,
                                        gradient = "approx", n_threads = threads, seed = 1,
                                        ret_extra = TRUE),
    umap = neighbor_embedding(x$dense, method = "umap", max_iter = 30, n_threads = threads,
                              seed = 1),
    largevis_sampled = neighbor_embedding(x$dense, method = "largevis", max_iter = 20,
                                          gradient = "sampled", n_threads = threads, seed = 1),
    pacmap = neighbor_embedding(x$dense, method = "pacmap", phases = c(10, 10, 20),
                                n_threads = threads, seed = 1),
    far_field_plan = far_field_plan(Y_big, n_threads = threads),
    far_field_plan_clusters = far_field_plan(Y_clusters, n_threads = threads),
    far_field_plan_halo = far_field_plan(Y_halo, n_threads = threads),
    gradient_clusters = cost_gradient(Y_clusters, P, gradient = "approx", n_threads = threads),
    gradient_halo = cost_gradient(Y_halo, P, gradient = "approx", n_threads = threads),
    gradient_exact = cost_gradient(Y_big, P, gradient = "exact", n_threads = threads),
    gradient_approx = cost_gradient(Y_big, P, gradient = "approx", n_threads = threads),
    gradient_umap = cost_gradient(Y_big, P, method = "umap", gradient = "approx",
                                  n_threads = threads))
}

x <- make_inputs()
results <- list()
results <- c(results, knn <- knn_calls(x))
results <- c(results, query_calls(x))
results <- c(results, graph_calls(x, knn))
results <- c(results, quality_calls(x))
results <- c(results, pca_calls(x))
results <- c(results, embed_calls(x))
# (times differ from run to run; they are no output of the algorithms)
strip_times <- function(r) {
  if (is.list(r)) {
    r <- r[!names(r) %in% c("time", "times", "elapsed", "timings")]
    r[] <- lapply(r, strip_times)
  }
  r
}
results <- lapply(results, strip_times)

if (args[1] == "save") {
  saveRDS(results, args[2])
  cat("saved", length(results), "results to", args[2], "\n")
} else {
  saved <- readRDS(args[2])
  if (!identical(sort(names(saved)), sort(names(results)))) {
    cat("the two runs made different sets of results\n")
    quit(status = 1)
  }
  same <- vapply(names(saved), function(nm) identical(saved[[nm]], results[[nm]]), logical(1))
  for (nm in names(saved)[!same]) cat("DIFFERS:", nm, "\n")
  cat(sum(same), "of", length(same), "results identical\n")
  quit(status = if (all(same)) 0 else 1)
}
