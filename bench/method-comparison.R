# UMAP on the kNN graph, UMAP on the LSNN graph, PaCMAP, LocalMAP and t-SNE
# on all 70,000 Fashion-MNIST images (pixels / 255), each by lsnn's
# neighbor_embedding() at its defaults on 2 threads: seconds for the whole
# call, 10-NN label accuracy, random-triplet accuracy and 15-NN
# preservation (embedding_quality()). The vignette "Locally scaled
# neighbours" shows the stored table and picture.
#
#   Rscript bench/method-comparison.R            # bench/results/method-comparison.*
#   Rscript bench/method-comparison.R --store    # also inst/extdata/ and man/figures/
suppressPackageStartupMessages(library(lsnn))
source(file.path("bench", "common.R"))
store <- "--store" %in% commandArgs(trailingOnly = TRUE)
n_threads <- 2L

fm <- fashion_mnist()
X <- fm$X / 255
label <- fm$label

runs <- list(
  "UMAP, kNN" = function() neighbor_embedding(X, "umap", n_threads = n_threads),
  "UMAP, LSNN" = function() neighbor_embedding(X, "umap", neighbors = "lsnn",
                                               n_threads = n_threads),
  "PaCMAP" = function() neighbor_embedding(X, "pacmap", n_threads = n_threads),
  "LocalMAP" = function() neighbor_embedding(X, "localmap", n_threads = n_threads),
  "t-SNE" = function() neighbor_embedding(X, "tsne", n_threads = n_threads)
)

label_accuracy <- function(Y) {
  idx <- extended_knn(Y, 10, 0, nn_kind = "exact", n_threads = n_threads)$idx[, -1]
  mean(matrix(as.integer(label)[idx], ncol = 10) == as.integer(label))
}

rows <- list()
emb <- list()
for (name in names(runs)) {
  set.seed(42)
  secs <- elapsed(Y <- runs[[name]]())
  q <- embedding_quality(X, Y, k = 15, n_threads = n_threads)
  rows[[name]] <- data.frame(method = name, seconds = secs, knn10_label = label_accuracy(Y),
                             random_triplet_accuracy = q$random_triplet_accuracy,
                             neighbor_preservation = q$neighbor_preservation)
  emb[[name]] <- Y
  print(rows[[name]])
}
res <- do.call(rbind, rows)
rownames(res) <- NULL
out <- file.path(results_dir(), "method-comparison")
write.csv(res, paste0(out, ".csv"), row.names = FALSE)
saveRDS(emb, paste0(out, ".rds"))

draw <- function(file) {
  grDevices::png(file, width = 1500, height = 330, res = 90)
  on.exit(grDevices::dev.off())
  graphics::par(mfrow = c(1, length(emb)), mar = c(0.5, 0.5, 2, 0.5))
  cols <- grDevices::hcl.colors(nlevels(label), "Dark 3")[as.integer(label)]
  for (name in names(emb)) {
    graphics::plot(emb[[name]], col = cols, pch = ".", axes = FALSE, xlab = "", ylab = "",
                   main = name, asp = 1)
  }
}
draw(paste0(out, ".png"))
if (store) {
  write.csv(res, file.path("inst", "extdata", "method-comparison.csv"), row.names = FALSE)
  dir.create(file.path("man", "figures"), showWarnings = FALSE)
  draw(file.path("man", "figures", "fashion-methods.png"))
}
print(res)
