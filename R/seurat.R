# lsnn's graphs and layouts as Seurat objects (SeuratObject is suggested:
# these functions load it when called).

#' An lsnn graph as a Seurat Neighbor object
#'
#' Turns a neighbour graph into the `Neighbor` object of the SeuratObject
#' package, so that Seurat runs on it: store it in a Seurat object with
#' `obj[["lsnn"]] <- as_seurat_neighbor(graph, obj)`, then
#' `Seurat::RunUMAP(obj, nn.name = "lsnn")` runs UMAP on it (through uwot,
#' as `uwot::umap(nn_method = graph)` would).
#'
#' **Clustering.** Seurat's `FindClusters()` reads a `Graph` of
#' similarities. `SeuratObject::as.Graph()` of a `Neighbor` holds its
#' distances instead, so that farther neighbours would weigh more: give it
#' the graph's fuzzy memberships, which weigh nearer neighbours more, as
#' Seurat's own SNN graph does:
#' `V <- umap_affinities(nn_method = graph); dimnames(V) <- list(colnames(obj), colnames(obj));`
#' `obj[["lsnn_fuzzy"]] <- SeuratObject::as.Graph(V)`, then
#' `Seurat::FindClusters(obj, graph.name = "lsnn_fuzzy")`.
#'
#' The `Neighbor` object holds the graph as lsnn has it: `nn.idx`, the
#' integer row numbers with each cell itself in column 1, and `nn.dist`, the
#' distances, as `Seurat::FindNeighbors(return.neighbor = TRUE)` stores its
#' own. The way back needs no function: every lsnn function that takes a
#' graph reads a `Neighbor` object as it reads `list(idx, dist)`, so
#' `locally_scaled_knn(...)` to `as_seurat_neighbor()` and back gives the
#' same graph, and a `Neighbor` of Seurat's own can be given to
#' [enn_to_lsnn()] (with enough neighbours, say `FindNeighbors(k.param =
#' 66, return.neighbor = TRUE)`) for its locally scaled neighbours.
#'
#' @param graph A graph in any form lsnn reads (see [extended_knn()]):
#'   `list(idx, dist)` with each row itself in column 1, as from
#'   [locally_scaled_knn()] or [extended_knn()].
#' @param cells The cell names, one per row of `graph` in its order, all
#'   different; or a Seurat object, whose cells (`colnames(obj)`) are taken.
#' @return A `Neighbor` object of the SeuratObject package.
#' @seealso [as_seurat_dimreduc()] for layouts, [LsnnParam()] for
#'   Bioconductor.
#' @examples
#' if (requireNamespace("SeuratObject", quietly = TRUE)) {
#'   X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#'   cells <- paste0("cell", seq_len(nrow(X)))
#'   g <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact")
#'   nb <- as_seurat_neighbor(g, cells)
#'   print(nb)
#'   # lsnn reads it back as the same graph
#'   print(identical(truncate_graph(nb, 15), g))
#' }
#' \donttest{
#' if (requireNamespace("Seurat", quietly = TRUE)) {
#'   counts <- Matrix::Matrix(t(round(X * 10)), sparse = TRUE,
#'                            dimnames = list(colnames(X), cells))
#'   obj <- SeuratObject::CreateSeuratObject(counts)
#'   obj[["lsnn"]] <- as_seurat_neighbor(g, obj)
#'   obj <- Seurat::RunUMAP(obj, nn.name = "lsnn", verbose = FALSE)
#' }
#' }
#' @export
as_seurat_neighbor <- function(graph, cells) {
  graph <- check_graph(graph, "graph")
  cells <- seurat_cells(cells, nrow(graph$idx), "graph")
  require_seurat_object("as_seurat_neighbor()")
  methods::new(methods::getClassDef("Neighbor", package = "SeuratObject"),
               nn.idx = graph$idx, nn.dist = graph$dist, cell.names = cells)
}

#' An lsnn layout as a Seurat DimReduc object
#'
#' Turns an embedding, such as one from [neighbor_embedding()], into the
#' `DimReduc` object of the SeuratObject package, to be stored in a Seurat
#' object (`obj[["lsnn_umap"]] <- as_seurat_dimreduc(Y, obj)`) and plotted
#' with `Seurat::DimPlot(obj, reduction = "lsnn_umap")`.
#'
#' @param Y The layout: a numeric matrix with one row per cell, or what
#'   `neighbor_embedding()` returns with `ret_model = TRUE` or `ret_extra`
#'   (its element `embedding` is taken), or the model alone.
#' @param cells The cell names, one per row of `Y` in its order, all
#'   different; or a Seurat object, whose cells (`colnames(obj)`) are taken.
#' @param key The prefix of the columns' names, letters and digits starting
#'   with a letter and ending with an underscore: the columns are named
#'   `LSNN_1`, `LSNN_2`, ... by default.
#' @param assay The assay the layout came from: `NULL` takes the default
#'   assay of `cells` when that is a Seurat object, and "RNA" (the name
#'   SeuratObject gives a DimReduc without one) otherwise.
#' @return A `DimReduc` object of the SeuratObject package, its cell
#'   embeddings `Y` with the cells as row names.
#' @seealso [as_seurat_neighbor()]
#' @examples
#' if (requireNamespace("SeuratObject", quietly = TRUE)) {
#'   X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#'   cells <- paste0("cell", seq_len(nrow(X)))
#'   Y <- neighbor_embedding(X, method = "umap", max_iter = 100)
#'   dr <- as_seurat_dimreduc(Y, cells)
#'   print(head(SeuratObject::Embeddings(dr), 3))
#' }
#' @export
as_seurat_dimreduc <- function(Y, cells, key = "LSNN_", assay = NULL) {
  if (inherits(Y, "lsnn_embedding_model") ||
      (is.list(Y) && !is.data.frame(Y) && is.matrix(Y$embedding))) {
    Y <- Y$embedding
  }
  Y <- check_coords(Y, "Y")
  if (!is.character(key) || length(key) != 1 || is.na(key) ||
      !grepl("^[A-Za-z][A-Za-z0-9]*_$", key)) {
    stop_arg("'key' must be one string of letters and digits, starting with a letter and ",
             "ending with an underscore (such as \"LSNN_\")")
  }
  if (!is.null(assay) && (!is.character(assay) || length(assay) != 1 || is.na(assay) ||
                          !nzchar(assay))) {
    stop_arg("'assay' must be the name of an assay or NULL")
  }
  require_seurat_object("as_seurat_dimreduc()")
  if (is.null(assay)) {
    assay <- if (inherits(cells, "Seurat")) SeuratObject::DefaultAssay(cells) else "RNA"
  }
  cells <- seurat_cells(cells, nrow(Y), "Y")
  dimnames(Y) <- list(cells, paste0(key, seq_len(ncol(Y))))
  SeuratObject::CreateDimReducObject(embeddings = Y, key = key, assay = assay)
}

require_seurat_object <- function(what) {
  if (!requireNamespace("SeuratObject", quietly = TRUE)) {
    stop_arg(what, " needs the package SeuratObject: install.packages(\"SeuratObject\")")
  }
}

# The cell names of `cells` (names, or a Seurat object's cells), checked:
# one per row of `what`, which has n rows, all different.
seurat_cells <- function(cells, n, what) {
  if (inherits(cells, "Seurat")) {
    cells <- colnames(cells)
    source <- "the Seurat object 'cells' has"
  } else {
    if (!is.character(cells) || !is.null(dim(cells))) {
      stop_arg("'cells' must be the cell names (a character vector) or a Seurat object")
    }
    source <- "'cells' has"
  }
  if (length(cells) != n) {
    stop_arg(source, " ", length(cells), " cells but '", what, "' has ", n, " rows")
  }
  if (anyNA(cells) || any(!nzchar(cells))) {
    stop_arg("'cells' holds a missing or empty name (cell ", which(is.na(cells) | !nzchar(cells))[1], ")")
  }
  repeated <- anyDuplicated(cells)
  if (repeated > 0) {
    stop_arg("'cells' holds the name \"", cells[repeated], "\" twice (cells ",
             match(cells[repeated], cells), " and ", repeated, "); cell names must differ")
  }
  cells
}
