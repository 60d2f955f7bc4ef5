# PCA before the search: UMAP and t-SNE of all 70,000 Fashion-MNIST images
# (pixels / 255) by neighbor_embedding() at its defaults on 2 threads,
# without and with `pca = 50`: seconds for the whole call (the PCA
# included) and for its steps, 10-NN label accuracy, random-triplet
# accuracy and 15-NN preservation, all measured against the 784 pixel
# columns (as bench/method-comparison.R). With "transform": 10,000 images placed in
# models fitted on the other 60,000, with and without the kept rotation:
# seconds of the transform and the 10-NN label accuracy of the new points
# among the fitted ones.
#
#   Rscript bench/bench-pca.R                  # the fits: bench/results/bench-pca.csv
#   Rscript bench/bench-pca.R fit transform    # and the new points
#   Rscript bench/bench-pca.R fit tsne         # t-SNE only ("umap": UMAP only)
suppressPackageStartupMessages(library(lsnn))
source(file.path("bench", "common.R"))
args <- commandArgs(trailingOnly = TRUE)
parts <- if (any(args %in% c("fit", "transform"))) args else c(args, "fit")
methods <- intersect(args, c("umap", "tsne"))
if (length(methods) == 0) methods <- c("umap", "tsne")
n_threads <- 2L

fm <- fashion_mnist()
X <- fm$X / 255
label <- as.integer(fm$label)

# 10-NN label accuracy of embedded points `Y` (labels `lab`) among the
# reference points `Y_ref` (labels `lab_ref`); without a reference, among
# themselves.
label_accuracy <- function(Y, lab, Y_ref = NULL, lab_ref = lab) {
  if (is.null(Y_ref)) {
    idx <- extended_knn(Y, 10, 0, nn_kind = "exact", n_threads = n_threads)$idx[, -1]
  } else {
    index <- extended_knn(Y_ref, 10, 0, nn_kind = "exact", n_threads = n_threads,
                          ret_index = TRUE)$index
    idx <- extended_knn_query(index, Y, 10, nn_kind = "exact", n_threads = n_threads)$idx
  }
  mean(matrix(lab_ref[idx], ncol = 10) == lab)
}

rows <- list()
if ("fit" %in% parts) {
  # the pixels' exact 15-NN graph once, for every embedding's preservation
  nn <- extended_knn(X, 15, 0, nn_kind = "exact", n_threads = n_threads)
  # (ret_extra = TRUE for the time of each step: the PCA is in "affinities",
  # with the neighbour search)
  runs <- list(
    "UMAP" = function() neighbor_embedding(X, "umap", n_threads = n_threads, ret_extra = TRUE),
    "UMAP, pca = 50" = function() neighbor_embedding(X, "umap", pca = 50, n_threads = n_threads,
                                                     ret_extra = TRUE),
    "t-SNE" = function() neighbor_embedding(X, "tsne", n_threads = n_threads, ret_extra = TRUE),
    "t-SNE, pca = 50" = function() neighbor_embedding(X, "tsne", pca = 50, n_threads = n_threads,
                                                      ret_extra = TRUE)
  )
  chosen <- names(runs)[c("umap", "umap", "tsne", "tsne") %in% methods]
  for (name in chosen) {
    set.seed(42)
    secs <- elapsed(res <- runs[[name]]())
    Y <- res$embedding
    set.seed(1)
    q <- embedding_quality(X, Y, k = 15, nn = nn, n_threads = n_threads)
    rows[[name]] <- data.frame(run = name, seconds = secs,
                               affinities = res$time[["affinities"]], init = res$time[["init"]],
                               optimize = res$time[["optimize"]],
                               knn10_label = label_accuracy(Y, label),
                               random_triplet_accuracy = q$random_triplet_accuracy,
                               neighbor_preservation = q$neighbor_preservation)
    print(rows[[name]])
    rm(res)
  }
}

if ("transform" %in% parts) {
  train <- seq_len(round(nrow(X) * 6 / 7))   # the first 60,000 images
  for (method in methods) {
    for (pca in list(NULL, 50)) {
      name <- paste0(if (method == "umap") "UMAP" else "t-SNE",
                     if (!is.null(pca)) ", pca = 50", ": 10,000 new points")
      set.seed(42)
      fit <- neighbor_embedding(X[train, ], method, pca = pca, ret_model = TRUE,
                                n_threads = n_threads)
      set.seed(43)
      secs <- elapsed(Y_new <- neighbor_embedding_transform(X[-train, ], fit$model,
                                                            n_threads = n_threads))
      rows[[name]] <- data.frame(run = name, seconds = secs, affinities = NA_real_,
                                 init = NA_real_, optimize = NA_real_,
                                 knn10_label = label_accuracy(Y_new, label[-train],
                                                              fit$embedding, label[train]),
                                 random_triplet_accuracy = NA_real_,
                                 neighbor_preservation = NA_real_)
      print(rows[[name]])
    }
  }
}

res <- do.call(rbind, rows)
rownames(res) <- NULL
write.csv(res, file.path(results_dir(), paste0("bench-pca", if (length(methods) == 1)
  paste0("-", methods), ".csv")), row.names = FALSE)
print(res, digits = 4)
