#' lsnn: locally scaled nearest neighbours and neighbour embeddings
#'
#' lsnn computes extended k-nearest neighbour graphs (exact, or approximate
#' by nearest-neighbour descent), picks from them the locally scaled nearest
#' neighbours that PaCMAP uses, and lays data or graphs out with t-SNE,
#' LargeVis, UMAP, t-UMAP, PaCMAP and LocalMAP. Every graph is a list with
#' integer matrix `idx` (1-based, the row itself in column 1) and double
#' matrix `dist` (each row in increasing distance): the format
#' `uwot::umap(nn_method = )` takes. Wherever a graph is taken, graphs from
#' uwot (including the `$nn` of `umap(X, ret_nn = TRUE)` when it holds one
#' metric), rnndescent, RcppHNSW, BiocNeighbors and Seurat are read as they
#' are.
#'
#' @section A map of the package:
#' \describe{
#'   \item{Neighbour graphs}{[extended_knn()] (exact or approximate, with
#'     [approx_control()]), [locally_scaled_knn()], [enn_to_lsnn()],
#'     [locally_scaled_distances()], [sort_knn_graph()], [truncate_graph()],
#'     [neighbor_overlap()].}
#'   \item{New rows}{[extended_knn_query()] and [locally_scaled_knn_query()],
#'     from the index `ret_index = TRUE` keeps.}
#'   \item{Data on disk}{[write_shards()], [shard_set()], [check_shards()],
#'     [extended_knn_sharded()], [locally_scaled_knn_sharded()] (tasks on
#'     `future::plan()`'s workers, set by [shard_control()]),
#'     [read_graph_shards()].}
#'   \item{Affinities}{[perplexity_affinities()], [umap_affinities()],
#'     [umap_ab()].}
#'   \item{Layouts}{[neighbor_embedding()] (t-SNE, LargeVis, UMAP, t-UMAP,
#'     PaCMAP, LocalMAP; `ret_model = TRUE` keeps a model) and
#'     [neighbor_embedding_transform()] (new points in a kept layout).}
#'   \item{Costs}{[cost_gradient()] (each method's cost and exact gradient, or
#'     the grid's approximation) and [far_field_plan()] (how a layout's
#'     all-pairs sums are laid out).}
#'   \item{Quality}{[embedding_quality()], [neighbor_preservation()],
#'     [trustworthiness()], [continuity()], [random_triplet_accuracy()],
#'     [distance_correlation()].}
#'   \item{Other packages}{[LsnnParam()] (a BiocNeighbors backend, for scater,
#'     scran and bluster), [as_seurat_neighbor()], [as_seurat_dimreduc()].}
#'   \item{Data and machine}{[scurvehole()], [swissroll()], [spheres()],
#'     [hierarchical()] (see [lsnn-data]), [fashion_mnist()], [read_idx()],
#'     [default_n_threads()], [simd_kernels()].}
#' }
#'
#' Every function with `n_threads` runs on [default_n_threads()] threads
#' unless told otherwise, and gives the same result for any number of
#' threads; random steps follow R's generator ([set.seed()]) or a `seed`
#' argument.
#'
#' @examples
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' g <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact")
#' Y <- neighbor_embedding(method = "umap", nn_method = g)
#' plot(Y, col = iris$Species[!duplicated(iris[, 1:4])], pch = 20)
#' Y <- neighbor_embedding(X, "pacmap")
#' @keywords internal
#' @useDynLib lsnn, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom cli cli_progress_bar
#' @importFrom RcppParallel RcppParallelLibs
"_PACKAGE"
