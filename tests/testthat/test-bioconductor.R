# LsnnParam behind BiocNeighbors' generics, and the Bioconductor functions
# that take a BNPARAM (scater, scran, bluster), with the real packages; and
# behind the generics of BiocNeighbors 2.x, through stand-ins with their
# signatures (tests/testthat/fixtures), as Debian ships 1.x.

bioc_data <- function(n = 300, d = 6, seed = 1) {
  set.seed(seed)
  X <- matrix(rnorm(n * d), n, d)
  X[1:(n / 2), 1] <- X[1:(n / 2), 1] * 0.2 + 3   # two densities
  rownames(X) <- paste0("p", seq_len(n))
  X
}

# X as a SingleCellExperiment whose "PCA" is X itself.
bioc_sce <- function(X) {
  sce <- SingleCellExperiment::SingleCellExperiment(assays = list(logcounts = t(X)))
  SingleCellExperiment::reducedDim(sce, "PCA") <- X
  sce
}

test_that("LsnnParam() checks its arguments and shows its settings", {
  skip_if_not_installed("BiocNeighbors")
  p <- LsnnParam()
  expect_true(methods::is(p, "BiocNeighborParam"))
  expect_identical(p@kind, "lsnn")
  expect_identical(p@nn_kind, "approx")
  expect_identical(p@distance, "Euclidean")
  expect_identical(LsnnParam(metric = "manhattan")@distance, "Manhattan")
  out <- capture.output(show(LsnnParam(kind = "knn", nn_kind = "exact", seed = 3)))
  expect_match(out[1], "class: LsnnParam")
  expect_true(any(grepl("kind: knn", out)))
  expect_true(any(grepl(paste0("search: exact, metric: euclidean, threads: ",
                               default_n_threads(), ", seed: 3"), out, fixed = TRUE)))
  out <- capture.output(show(LsnnParam(n_threads = 1)))
  expect_true(any(grepl("threads: 1,", out, fixed = TRUE)))
  expect_error(LsnnParam(kind = "umap"), "'kind' must be one of")
  expect_error(LsnnParam(nn_kind = "fast"), "'nn_kind' must be one of")
  expect_error(LsnnParam(metric = "hamming"), "'metric' must be one of")
  expect_error(LsnnParam(n_extra = -1), "'n_extra' must be at least 0")
  expect_error(LsnnParam(scale_from = 8), "'scale_from' \\(8\\) must not be greater")
  expect_error(LsnnParam(seed = 1.5), "'seed' must be a single whole number")
  expect_error(LsnnParam(nn_args = 3), "'nn_args' must be")
  expect_error(LsnnParam(epsilon = -1), "'epsilon'")
})

test_that("kind = 'knn' finds the exact neighbours BiocNeighbors' KMKNN finds", {
  skip_if_not_installed("BiocNeighbors")
  X <- bioc_data()
  ours <- BiocNeighbors::findKNN(X, k = 12, BNPARAM = LsnnParam(kind = "knn", nn_kind = "exact"))
  theirs <- BiocNeighbors::findKNN(X, k = 12, BNPARAM = BiocNeighbors::KmknnParam())
  expect_identical(ours$index, theirs$index)
  expect_equal(ours$distance, theirs$distance, tolerance = 1e-12)
  expect_identical(dim(ours$index), c(300L, 12L))
  expect_null(dimnames(ours$index))
  # manhattan, against BiocNeighbors' exhaustive search
  ours <- BiocNeighbors::findKNN(X, k = 5, BNPARAM = LsnnParam(kind = "knn", nn_kind = "exact",
                                                              metric = "manhattan"))
  theirs <- BiocNeighbors::findKNN(X, k = 5,
                                   BNPARAM = BiocNeighbors::ExhaustiveParam(distance = "Manhattan"))
  expect_identical(ours$index, theirs$index)
  expect_equal(ours$distance, theirs$distance, tolerance = 1e-12)
})

test_that("kind = 'lsnn' is the LSNN graph of k + 1 columns without the row itself", {
  skip_if_not_installed("BiocNeighbors")
  X <- bioc_data()
  p <- LsnnParam(kind = "lsnn", nn_kind = "exact", n_extra = 30)
  nn <- BiocNeighbors::findKNN(X, k = 14, BNPARAM = p)
  g <- locally_scaled_knn(X, n_neighbors = 15, n_extra = 30, nn_kind = "exact")
  expect_identical(nn$index, g$idx[, -1])
  expect_identical(nn$distance, g$dist[, -1])
  p2 <- LsnnParam(kind = "lsnn", nn_kind = "exact", n_extra = 30, n_threads = 2)
  expect_identical(BiocNeighbors::findKNN(X, k = 14, BNPARAM = p2), nn)
  # the locally scaled neighbours are not the nearest ones everywhere
  knn <- BiocNeighbors::findKNN(X, k = 14, BNPARAM = BiocNeighbors::KmknnParam())
  expect_lt(neighbor_overlap(nn$index, knn$index), 1)
})

test_that("get.index, get.distance, last, subset and transposed are honoured", {
  skip_if_not_installed("BiocNeighbors")
  X <- bioc_data()
  p <- LsnnParam(kind = "lsnn", nn_kind = "exact")
  full <- BiocNeighbors::findKNN(X, k = 10, BNPARAM = p)
  expect_identical(names(BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, get.distance = FALSE)),
                   "index")
  expect_identical(names(BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, get.index = FALSE)),
                   "distance")
  last <- BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, last = 3)
  expect_identical(last$index, full$index[, 8:10])
  expect_identical(last$distance, full$distance[, 8:10])
  rows <- c(5L, 2L, 250L)
  by_number <- BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, subset = rows)
  expect_identical(by_number$index, full$index[rows, ])
  by_name <- BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, subset = rownames(X)[rows])
  expect_identical(by_name, by_number)
  by_logical <- BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, subset = seq_len(300) %in% rows)
  expect_identical(by_logical$index, full$index[sort(rows), ])
  expect_identical(BiocNeighbors::findKNN(t(X), k = 10, BNPARAM = p, transposed = TRUE), full)
  expect_error(BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, subset = 301),
               "'subset' must hold point numbers from 1 to 300")
  expect_error(BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, subset = "nobody"),
               "'subset' holds names of no point")
  expect_error(BiocNeighbors::findKNN(X, k = 10, BNPARAM = p, get.index = NA),
               "'get.index' must be TRUE or FALSE")
  expect_error(BiocNeighbors::findKNN(X, k = 0, BNPARAM = p), "'k' must be at least 1")
  expect_error(BiocNeighbors::findKNN(X, k = 1.5, BNPARAM = p), "'k' must be a single whole number")
  expect_error(BiocNeighbors::findKNN(X, k = 5, BNPARAM = p, last = 0), "'last' must be at least 1")
  expect_error(BiocNeighbors::findKNN(X, k = 5, BNPARAM = p, BPPARAM = 2),
               "'BPPARAM' must be a BiocParallelParam")
  expect_error(BiocNeighbors::findKNN(matrix("a", 5, 2), k = 2, BNPARAM = p),
               "'X' must be numeric \\(it is character\\)")
  X_na <- X
  X_na[3, 2] <- NA
  expect_error(BiocNeighbors::findKNN(X_na, k = 5, BNPARAM = p), "'X' contains 1 NA")
  expect_identical(BiocNeighbors::findKNN(as.data.frame(X), k = 10, BNPARAM = p), full)
  expect_identical(BiocNeighbors::findKNN(X, k = 10, BNPARAM = p,
                                          BPPARAM = BiocParallel::SerialParam()), full)
  expect_warning(capped <- BiocNeighbors::findKNN(X[1:20, ], k = 25,
                                                  BNPARAM = LsnnParam(kind = "knn")),
                 "'k' \\(25\\) is more than the 19 other points: capped at 19")
  expect_identical(dim(capped$index), c(20L, 19L))
})

test_that("an index gives the graph of its data, for k within and beyond its own", {
  skip_if_not_installed("BiocNeighbors")
  X <- bioc_data()
  for (kind in c("knn", "lsnn")) {
    p <- LsnnParam(kind = kind, nn_kind = "exact", n_extra = 20)
    index <- BiocNeighbors::buildIndex(X, BNPARAM = p)
    expect_true(methods::is(index, "BiocNeighborIndex"))
    expect_identical(dim(index), dim(X))
    expect_identical(BiocNeighbors::bndata(index), unname(t(X)))
    for (k in c(5, 15, 30)) {
      expect_identical(BiocNeighbors::findKNN(BNINDEX = index, k = k),
                       BiocNeighbors::findKNN(X, k = k, BNPARAM = p), label = paste(kind, k))
    }
    expect_identical(BiocNeighbors::findKNN(BNINDEX = index, k = 8, subset = c("p3", "p7")),
                     BiocNeighbors::findKNN(X, k = 8, BNPARAM = p, subset = c(3, 7)))
    expect_identical(BiocNeighbors::findKNN(BNINDEX = index, BNPARAM = p, k = 8),
                     BiocNeighbors::findKNN(X, k = 8, BNPARAM = p))
  }
  expect_match(capture.output(show(index))[2], "dim: 300 6")
})

test_that("queries: nearest reference points, and locally scaled ones by the reference's scales", {
  skip_if_not_installed("BiocNeighbors")
  X <- bioc_data()
  ref <- X[1:240, ]
  query <- X[241:300, ]
  p <- LsnnParam(kind = "knn", nn_kind = "exact")
  ours <- BiocNeighbors::queryKNN(ref, query, k = 10, BNPARAM = p)
  theirs <- BiocNeighbors::queryKNN(ref, query, k = 10, BNPARAM = BiocNeighbors::KmknnParam())
  expect_identical(ours$index, theirs$index)
  expect_equal(ours$distance, theirs$distance, tolerance = 1e-12)
  index <- BiocNeighbors::buildIndex(ref, BNPARAM = p)
  expect_identical(BiocNeighbors::queryKNN(BNINDEX = index, query = query, k = 10), ours)
  expect_identical(BiocNeighbors::queryKNN(BNINDEX = index, query = t(query), k = 10,
                                           transposed = TRUE), ours)
  sub <- BiocNeighbors::queryKNN(BNINDEX = index, query = query, k = 10, subset = c(4, 1),
                                 last = 2)
  expect_identical(sub$index, ours$index[c(4, 1), 9:10])

  p <- LsnnParam(kind = "lsnn", nn_kind = "exact")
  index <- BiocNeighbors::buildIndex(ref, BNPARAM = p)
  q <- BiocNeighbors::queryKNN(BNINDEX = index, query = query, k = 10)
  lsnn_index <- locally_scaled_knn(ref, n_neighbors = 17, nn_kind = "exact", ret_index = TRUE)$index
  expected <- locally_scaled_knn_query(lsnn_index, query, n_neighbors = 10, nn_kind = "exact")
  expect_identical(q$index, expected$idx)
  expect_identical(q$distance, expected$dist)
  expect_identical(BiocNeighbors::queryKNN(ref, query, k = 10, BNPARAM = p), q)
  expect_error(BiocNeighbors::queryKNN(BNINDEX = index, query = query[, 1:3], k = 10),
               "'query' has 3 columns; the reference data has 6")
  expect_warning(BiocNeighbors::queryKNN(BNINDEX = index, query = query, k = 300),
                 "'k' \\(300\\) is more than the 240 reference points")
})

test_that("an index and a parameter survive saveRDS() with the same answers", {
  skip_if_not_installed("BiocNeighbors")
  X <- bioc_data()
  p <- LsnnParam(kind = "lsnn", nn_kind = "approx", seed = 11)
  index <- BiocNeighbors::buildIndex(X[1:200, ], BNPARAM = p)
  q <- BiocNeighbors::queryKNN(BNINDEX = index, query = X[201:300, ], k = 10)
  file <- tempfile(fileext = ".rds")
  on.exit(unlink(file))
  saveRDS(list(index = index, param = p), file)
  back <- readRDS(file)
  expect_identical(BiocNeighbors::queryKNN(BNINDEX = back$index, query = X[201:300, ], k = 10), q)
  expect_identical(BiocNeighbors::findKNN(X, k = 10, BNPARAM = back$param),
                   BiocNeighbors::findKNN(X, k = 10, BNPARAM = p))

  # new R sessions: lsnn loaded first, and BiocNeighbors (with it lsnn's
  # classes) only when the objects are used; or BiocNeighbors first
  skip_if_quick()  # (child R processes)
  saveRDS(X, sub("\\.rds$", "-X.rds", file))
  on.exit(unlink(sub("\\.rds$", "-X.rds", file)), add = TRUE)
  on.exit(unlink(sub("\\.rds$", "-q.rds", file)), add = TRUE)
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script), add = TRUE)
  first <- list(c("library(lsnn)", "stopifnot(!isNamespaceLoaded('BiocNeighbors'))"),
                c("loadNamespace('BiocNeighbors')", "library(lsnn)"))
  for (lines in first) {
    unlink(sub("\\.rds$", "-q.rds", file))
    writeLines(c(
      lines,
      sprintf("back <- readRDS('%s')", file),
      sprintf("X <- readRDS('%s')", sub("\\.rds$", "-X.rds", file)),
      "q <- BiocNeighbors::queryKNN(BNINDEX = back$index, query = X[201:300, ], k = 10)",
      sprintf("saveRDS(q, '%s')", sub("\\.rds$", "-q.rds", file))
    ), script)
    status <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = FALSE,
                      stderr = FALSE, env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
    expect_identical(status, 0L, label = lines[1])
    expect_identical(readRDS(sub("\\.rds$", "-q.rds", file)), q, label = lines[1])
  }
})

test_that("a seed gives the same approximate graph in every call; without, R's generator", {
  skip_if_not_installed("BiocNeighbors")
  X <- bioc_data(n = 2000, d = 4)
  p <- LsnnParam(kind = "lsnn", nn_kind = "approx", seed = 5)
  set.seed(1)
  before <- .Random.seed
  a <- BiocNeighbors::findKNN(X, k = 10, BNPARAM = p)
  expect_identical(.Random.seed, before)
  b <- BiocNeighbors::findKNN(X, k = 10, BNPARAM = p)
  expect_identical(a, b)
  g <- locally_scaled_knn(X, n_neighbors = 11, nn_kind = "approx", seed = 5)
  expect_identical(a$index, g$idx[, -1])
  p <- LsnnParam(kind = "lsnn", nn_kind = "approx")
  set.seed(2)
  c1 <- BiocNeighbors::findKNN(X, k = 10, BNPARAM = p)
  set.seed(2)
  expect_identical(BiocNeighbors::findKNN(X, k = 10, BNPARAM = p), c1)
})

test_that("a parameter or index changed slot by slot is refused with the slot named", {
  skip_if_not_installed("BiocNeighbors")
  X <- bioc_data()
  p <- LsnnParam(kind = "knn", nn_kind = "exact")
  bad <- p
  bad@kind <- "umap"
  expect_error(BiocNeighbors::findKNN(X, k = 5, BNPARAM = bad), "'BNPARAM@kind' must be one of")
  bad <- p
  bad@n_extra <- NA_integer_
  expect_error(BiocNeighbors::findKNN(X, k = 5, BNPARAM = bad), "'BNPARAM@n_extra'")
  index <- BiocNeighbors::buildIndex(X, BNPARAM = p)
  index@lsnn_index$sigma <- index@lsnn_index$sigma * 2
  expect_error(BiocNeighbors::findKNN(BNINDEX = index, k = 5),
               "'BNINDEX' is damaged: 'BNINDEX@lsnn_index\\$sigma' does not hold")
})

test_that("scater's runUMAP() with BNPARAM = LsnnParam() gives the layout of nn_method = LSNN", {
  skip_if_quick()  # (loads scater)
  skip_if_not_installed("BiocNeighbors")
  skip_if_not_installed("scater")
  skip_if_not_installed("SingleCellExperiment")
  skip_if_not_installed("uwot")
  X <- bioc_data()
  sce <- bioc_sce(X)
  set.seed(42)
  via_param <- scater::runUMAP(sce, dimred = "PCA", n_neighbors = 15, external_neighbors = TRUE,
                               BNPARAM = LsnnParam(kind = "lsnn", nn_kind = "exact"))
  g <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact")
  set.seed(42)
  via_graph <- scater::runUMAP(sce, dimred = "PCA", n_neighbors = 15, nn_method = g)
  expect_identical(SingleCellExperiment::reducedDim(via_param, "UMAP"),
                   SingleCellExperiment::reducedDim(via_graph, "UMAP"))
  # and the plain kNN graph gives another layout
  set.seed(42)
  via_knn <- scater::runUMAP(sce, dimred = "PCA", n_neighbors = 15, external_neighbors = TRUE)
  expect_false(identical(SingleCellExperiment::reducedDim(via_knn, "UMAP"),
                         SingleCellExperiment::reducedDim(via_param, "UMAP")))
})

test_that("scater's runTSNE() takes lsnn's neighbours", {
  skip_if_quick()  # (loads scater)
  skip_if_not_installed("BiocNeighbors")
  skip_if_not_installed("scater")
  skip_if_not_installed("SingleCellExperiment")
  skip_if_not_installed("Rtsne")
  X <- bioc_data()
  sce <- bioc_sce(X)
  set.seed(3)
  sce <- scater::runTSNE(sce, dimred = "PCA", perplexity = 10, external_neighbors = TRUE,
                         BNPARAM = LsnnParam(kind = "lsnn", nn_kind = "exact"))
  Y <- SingleCellExperiment::reducedDim(sce, "TSNE")
  expect_identical(dim(Y), c(300L, 2L))
  expect_true(all(is.finite(Y)))
})

test_that("scran's buildSNNGraph() with an exact kNN LsnnParam gives KMKNN's graph", {
  skip_if_not_installed("BiocNeighbors")
  skip_if_not_installed("scran")
  skip_if_not_installed("igraph")
  X <- bioc_data()
  ours <- scran::buildSNNGraph(X, transposed = TRUE, k = 10,
                               BNPARAM = LsnnParam(kind = "knn", nn_kind = "exact"))
  theirs <- scran::buildSNNGraph(X, transposed = TRUE, k = 10,
                                 BNPARAM = BiocNeighbors::KmknnParam())
  expect_identical(igraph::as_edgelist(ours), igraph::as_edgelist(theirs))
  expect_identical(igraph::E(ours)$weight, igraph::E(theirs)$weight)
  lsnn_graph <- scran::buildSNNGraph(X, transposed = TRUE, k = 10,
                                     BNPARAM = LsnnParam(kind = "lsnn", nn_kind = "exact"))
  expect_false(identical(igraph::as_edgelist(lsnn_graph), igraph::as_edgelist(theirs)))
})

test_that("bluster's graph clustering runs on lsnn's neighbours", {
  skip_if_not_installed("BiocNeighbors")
  skip_if_not_installed("bluster")
  X <- bioc_data()
  ours <- bluster::clusterRows(X, bluster::NNGraphParam(
    k = 10, BNPARAM = LsnnParam(kind = "knn", nn_kind = "exact")))
  theirs <- bluster::clusterRows(X, bluster::NNGraphParam(k = 10))
  expect_identical(ours, theirs)
  lsnn_clusters <- bluster::clusterRows(X, bluster::NNGraphParam(
    k = 10, BNPARAM = LsnnParam(kind = "lsnn", nn_kind = "exact")))
  expect_length(lsnn_clusters, 300)
})

test_that("BiocNeighbors 2.x's generics get lsnn's methods (stand-ins with their signatures)", {
  skip_if_quick()  # (R CMD INSTALL in a child R)
  skip_on_cran()
  fixtures <- test_path("fixtures")
  for (version in c("2.4", "2.6")) {
    lib <- tempfile("lib")
    dir.create(lib)
    out <- tempfile(fileext = ".rds")
    on.exit(unlink(c(lib, out), recursive = TRUE), add = TRUE)
    status <- system2(file.path(R.home("bin"), "R"),
                      c("CMD", "INSTALL", "--no-test-load", "-l", shQuote(lib),
                        shQuote(file.path(fixtures, paste0("BiocNeighbors-", version)))),
                      stdout = FALSE, stderr = FALSE)
    expect_identical(status, 0L)
    status <- system2(file.path(R.home("bin"), "Rscript"),
                      c(shQuote(file.path(fixtures, "bioc2-check.R")), shQuote(out)),
                      stdout = FALSE, stderr = FALSE,
                      env = paste0("R_LIBS=", paste(c(lib, .libPaths()), collapse = ":")))
    expect_identical(status, 0L)
    results <- readRDS(out)
    expect_length(results, 29)
    expect_true(all(results), label = paste0("BiocNeighbors ", version, ": ",
                                             paste(names(results)[!results], collapse = ", ")))
  }
})

test_that("a zero-row query through LsnnParam() is an empty result", {
  skip_if_not_installed("BiocNeighbors")
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  q <- X[0, , drop = FALSE]
  ours <- BiocNeighbors::queryKNN(X, q, k = 5, BNPARAM = LsnnParam())
  theirs <- BiocNeighbors::queryKNN(X, q, k = 5)
  expect_identical(lapply(ours, dim), lapply(theirs, dim))
  expect_identical(lapply(ours, typeof), lapply(theirs, typeof))
  index <- BiocNeighbors::buildIndex(X, BNPARAM = LsnnParam())
  expect_identical(lapply(BiocNeighbors::queryKNN(BNINDEX = index, query = q, k = 5), dim),
                   list(index = c(0L, 5L), distance = c(0L, 5L)))
  expect_identical(lapply(BiocNeighbors::queryKNN(X, X[1:3, ], k = 5, subset = integer(0),
                                                  BNPARAM = LsnnParam()), dim),
                   list(index = c(0L, 5L), distance = c(0L, 5L)))
  expect_error(BiocNeighbors::queryKNN(X, X[0, 1:3], k = 5, BNPARAM = LsnnParam()),
               "'query' has 3 columns")
})
