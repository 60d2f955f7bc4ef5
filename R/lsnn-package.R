#' lsnn: locally scaled nearest neighbours and neighbour embeddings
#'
#' lsnn computes extended k-nearest neighbour graphs (exact, or approximate
#' by nearest-neighbour descent), picks locally scaled nearest neighbours
#' from them as PaCMAP does, and embeds data or graphs with the t-SNE,
#' LargeVis and UMAP costs. Every graph is a list with integer matrix `idx`
#' (1-based, the row itself in column 1) and double matrix `dist` (each row
#' in increasing distance): the format `uwot::umap(nn_method = )` takes.
#'
#' @keywords internal
#' @useDynLib lsnn, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom cli cli_progress_bar
#' @importFrom RcppParallel RcppParallelLibs
"_PACKAGE"
