# t-SNE of the 70,000 Fashion-MNIST images / 255 under the default far field
# and under FIt-SNE's grid after the exaggeration (fitsne_grid() in
# bench/common.R): the optimisation's time, the exact KL under the same P
# and the layout's quality, from one approximate 90-NN graph, one P and one
# start (tsne_graph_and_start()) for both.
#
#   Rscript bench/bench-tsne-grid.R [grid ...]
#
# grid: default and/or fitsne (default: both, in that order). The graph and
# start are kept in LSNN_BENCH_DIR (default: bench/results/).
suppressPackageStartupMessages(library(lsnn))
source(file.path("bench", "common.R"))
grids <- commandArgs(TRUE)
if (length(grids) == 0) grids <- c("default", "fitsne")
if (!all(grids %in% c("default", "fitsne"))) stop("grids are default and fitsne")
threads <- 2L
X <- fashion_data() / 255
labels <- fashion_mnist()$label
work <- Sys.getenv("LSNN_BENCH_DIR", results_dir())
inputs <- file.path(work, "tsne-grid-inputs.rds")
if (!file.exists(inputs)) saveRDS(tsne_graph_and_start(X, threads), inputs, compress = FALSE)
inp <- readRDS(inputs)
P <- perplexity_affinities(nn_method = inp$graph, perplexity = 30, n_threads = threads)
for (grid in grids) {
  options(lsnn.grid = if (grid == "fitsne") fitsne_grid())
  secs <- elapsed(Y <- neighbor_embedding(P = P, method = "tsne", init = inp$Y0,
                                          n_threads = threads))
  options(lsnn.grid = NULL)
  kl <- cost_gradient(Y, P, "tsne", n_threads = threads, gradient = "exact")$cost
  q <- embedding_quality(X, Y, k = 15, n_threads = threads)
  idx <- extended_knn(Y, 11, 0, nn_kind = "exact", n_threads = threads)$idx[, -1]
  label10 <- mean(matrix(labels[idx], ncol = 10) == labels)
  cat(sprintf("%s grid: %.1f s, exact KL %.5f, 10-NN label %.4f, 15-NN %.4f, triplets %.4f\n",
              grid, secs, kl, label10, q$neighbor_preservation, q$random_triplet_accuracy))
}
