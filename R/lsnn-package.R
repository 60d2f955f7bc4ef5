#' lsnn: locally scaled nearest neighbours and neighbour embeddings
#'
#' lsnn computes extended k-nearest neighbour graphs (exact, or approximate
#' by nearest-neighbour descent), picks locally scaled nearest neighbours
#' from them as PaCMAP does, and embeds data or graphs with the t-SNE,
#' LargeVis and UMAP costs. Every graph is a list with integer matrix `idx`
#' (1-based, the row itself in column 1) and double matrix `dist` (each row
#' in increasing distance): the format `uwot::umap(nn_method = )` takes.
#' Wherever a graph is taken, graphs from uwot (including the `$nn` of
#' `umap(X, ret_nn = TRUE)` when it holds one metric), rnndescent and
#' RcppHNSW are read as they are.
#'
#' Start with [locally_scaled_knn()] or [extended_knn()] for graphs, and
#' [neighbor_embedding()] for embeddings; the data generators are listed in
#' [lsnn-data].
#'
#' @examples
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' g <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact")
#' Y <- neighbor_embedding(method = "umap", nn_method = g, max_iter = 200)
#' plot(Y, col = iris$Species[!duplicated(iris[, 1:4])], pch = 20)
#' @keywords internal
#' @useDynLib lsnn, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom cli cli_progress_bar
#' @importFrom RcppParallel RcppParallelLibs
"_PACKAGE"
