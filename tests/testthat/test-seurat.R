# lsnn graphs and layouts as Seurat objects, with the real packages.

skip_if_not_installed("SeuratObject")

seurat_data <- function(n = 200, d = 8, seed = 1) {
  set.seed(seed)
  X <- matrix(rnorm(n * d), n, d)
  X[1:(n / 2), ] <- X[1:(n / 2), ] * 0.3 + 2
  list(X = X, cells = sprintf("cell-%03d", seq_len(n)))
}

seurat_object <- function(data) {
  counts <- Matrix::Matrix(round(exp(t(data$X))), sparse = TRUE,
                           dimnames = list(paste0("gene", seq_len(ncol(data$X))), data$cells))
  suppressWarnings(SeuratObject::CreateSeuratObject(counts))
}

test_that("an lsnn graph becomes a Neighbor and comes back identical", {
  data <- seurat_data()
  g <- locally_scaled_knn(data$X, n_neighbors = 15, nn_kind = "exact")
  nb <- as_seurat_neighbor(g, data$cells)
  expect_s4_class(nb, "Neighbor")
  expect_identical(nb@nn.idx, g$idx)
  expect_identical(nb@nn.dist, g$dist)
  expect_identical(unname(SeuratObject::Indices(nb)), g$idx)
  expect_identical(SeuratObject::Cells(nb), data$cells)
  # lsnn reads a Neighbor wherever it takes a graph
  expect_identical(truncate_graph(nb, 15), g)
  expect_identical(sort_knn_graph(nb), g)
  expect_identical(neighbor_overlap(nb, g), 1)
  enn <- extended_knn(data$X, n_neighbors = 15, n_extra = 50, nn_kind = "exact")
  expect_identical(enn_to_lsnn(as_seurat_neighbor(enn, data$cells), 15), g)
  # other graph forms: BiocNeighbors' list(index, distance), self added
  expect_identical(as_seurat_neighbor(list(index = g$idx[, -1], distance = g$dist[, -1]),
                                      data$cells), nb)
})

test_that("as_seurat_neighbor() refuses cells that do not fit the graph", {
  data <- seurat_data()
  g <- locally_scaled_knn(data$X, n_neighbors = 10, nn_kind = "exact")
  expect_error(as_seurat_neighbor(g, data$cells[-1]), "'cells' has 199 cells but 'graph' has 200 rows")
  cells <- data$cells
  cells[7] <- cells[3]
  expect_error(as_seurat_neighbor(g, cells), "'cells' holds the name \"cell-003\" twice \\(cells 3 and 7\\)")
  cells[7] <- NA
  expect_error(as_seurat_neighbor(g, cells), "'cells' holds a missing or empty name \\(cell 7\\)")
  expect_error(as_seurat_neighbor(g, 1:200), "'cells' must be the cell names")
  expect_error(as_seurat_neighbor(list(idx = g$idx), data$cells), "'graph' must be a graph")
  bad <- g
  bad$idx[4, 1] <- 5L
  expect_error(as_seurat_neighbor(bad, data$cells), "the first column of 'graph\\$idx' must be the row itself")
})

test_that("a Neighbor's graph is checked when lsnn reads it", {
  data <- seurat_data()
  g <- locally_scaled_knn(data$X, n_neighbors = 10, nn_kind = "exact")
  nb <- as_seurat_neighbor(g, data$cells)
  nb@nn.dist[3, 4] <- -1
  expect_error(truncate_graph(nb, 5), "'graph\\$nn.dist' contains negative distances \\(row 3\\)")
})

test_that("Seurat's RunUMAP(nn.name = ) runs uwot on the LSNN graph", {
  skip_if_quick()  # (loads Seurat)
  skip_if_not_installed("Seurat")
  skip_if_not_installed("uwot")
  data <- seurat_data()
  obj <- seurat_object(data)
  g <- locally_scaled_knn(data$X, n_neighbors = 15, nn_kind = "exact")
  obj[["lsnn"]] <- as_seurat_neighbor(g, obj)
  expect_identical(obj[["lsnn"]]@nn.idx, g$idx)
  obj <- suppressWarnings(Seurat::RunUMAP(obj, nn.name = "lsnn", seed.use = 42, verbose = FALSE))
  Y <- SeuratObject::Embeddings(obj[["umap"]])
  expect_identical(rownames(Y), data$cells)
  # the same layout as uwot on the graph, with RunUMAP's settings and seed
  set.seed(42)
  expected <- uwot::umap(X = NULL, nn_method = g, n_threads = 1, n_components = 2L,
                         metric = "cosine", n_epochs = NULL, learning_rate = 1, min_dist = 0.3,
                         spread = 1, set_op_mix_ratio = 1, local_connectivity = 1L,
                         repulsion_strength = 1, negative_sample_rate = 5L, a = NULL, b = NULL,
                         fast_sgd = FALSE, verbose = FALSE)
  expect_identical(unname(Y), unname(expected))
})

test_that("as.Graph() turns the Neighbor into Seurat's graph of the same entries", {
  data <- seurat_data()
  g <- locally_scaled_knn(data$X, n_neighbors = 10, nn_kind = "exact")
  graph <- SeuratObject::as.Graph(as_seurat_neighbor(g, data$cells))
  expect_s4_class(graph, "Graph")
  expect_identical(dimnames(graph), list(data$cells, data$cells))
  m <- as.matrix(graph)
  for (i in c(1, 57, 200)) {
    others <- g$idx[i, -1]
    expect_identical(unname(m[i, others]), g$dist[i, -1])
    expect_true(all(m[i, -g$idx[i, ]] == 0))
  }
  # and back: Seurat's Neighbor of that Graph is lsnn's graph again
  back <- SeuratObject::as.Neighbor(graph)
  expect_identical(SeuratObject::Cells(back), data$cells)
  expect_identical(truncate_graph(back, 10), g)
})

test_that("a layout becomes a DimReduc with the cells' names", {
  data <- seurat_data()
  Y <- neighbor_embedding(data$X, method = "umap", max_iter = 50, seed = 1)
  dr <- as_seurat_dimreduc(Y, data$cells)
  expect_s4_class(dr, "DimReduc")
  E <- SeuratObject::Embeddings(dr)
  expect_identical(unname(E), unname(Y))
  expect_identical(dimnames(E), list(data$cells, c("LSNN_1", "LSNN_2")))
  expect_identical(SeuratObject::Key(dr), "LSNN_")
  expect_identical(SeuratObject::DefaultAssay(dr), "RNA")
  expect_identical(SeuratObject::DefaultAssay(as_seurat_dimreduc(Y, data$cells, assay = "ADT")), "ADT")

  obj <- seurat_object(data)
  obj[["lsnn_umap"]] <- as_seurat_dimreduc(Y, obj, key = "LSNNUMAP_")
  expect_identical(unname(SeuratObject::Embeddings(obj, "lsnn_umap")), unname(Y))
  expect_identical(SeuratObject::DefaultAssay(obj[["lsnn_umap"]]),
                   SeuratObject::DefaultAssay(obj))

  model <- neighbor_embedding(data$X, method = "umap", max_iter = 50, seed = 1, ret_model = TRUE)
  expect_identical(unname(SeuratObject::Embeddings(as_seurat_dimreduc(model, data$cells))),
                   unname(model$embedding))
  expect_identical(unname(SeuratObject::Embeddings(as_seurat_dimreduc(model$model, data$cells))),
                   unname(model$embedding))
  expect_error(as_seurat_dimreduc(Y, data$cells, key = "umap"), "'key' must be one string")
  expect_error(as_seurat_dimreduc(Y, data$cells[1:5]), "'cells' has 5 cells but 'Y' has 200 rows")
  expect_error(as_seurat_dimreduc(Y[, 0], data$cells), "'Y'")
  expect_error(as_seurat_dimreduc(Y, data$cells, assay = 3), "'assay' must be the name")
})
