enn_fixture <- function(n = 300, d = 5, k = 66, seed = 1) {
  set.seed(seed)
  X <- clustered(n, d)
  list(X = X, enn = extended_knn(X, k - 1, 0, nn_kind = "exact"))
}

test_that("locally_scaled_distances matches the plain R definition value for value", {
  f <- enn_fixture()
  lsd <- locally_scaled_distances(f$enn$idx, f$enn$dist)
  expect_identical(lsd, ref_scaled(f$enn$idx, f$enn$dist))
  lsd2 <- locally_scaled_distances(f$enn$idx, f$enn$dist, scale_from = 2, scale_to = 3)
  expect_identical(lsd2, ref_scaled(f$enn$idx, f$enn$dist, 2, 3))
})

test_that("enn_to_lsnn matches the plain R definition, ties included", {
  f <- enn_fixture()
  for (nn in c(1, 2, 5, 15, 30)) {
    expect_identical(enn_to_lsnn(f$enn, nn), ref_lsnn(f$enn, nn), info = nn)
  }
  expect_identical(enn_to_lsnn(f$enn, 15, scale_from = 3, scale_to = 9, n_extra = 20),
                   ref_lsnn(f$enn, 15, 3, 9, 20))
  # rounded distances create many ties in both the scaled values and distances
  g <- f$enn
  g$dist <- round(g$dist, 1)
  expect_identical(enn_to_lsnn(g, 15), ref_lsnn(g, 15))
  expect_identical(enn_to_lsnn(g, 15, n_threads = 2), ref_lsnn(g, 15))
})

test_that("sort_knn_graph and truncate_graph match the plain R definitions", {
  f <- enn_fixture(k = 20)
  set.seed(2)
  vals <- matrix(sample(1:5, length(f$enn$dist), replace = TRUE), nrow(f$enn$idx))
  for (dec in c(FALSE, TRUE)) {
    for (self in c(FALSE, TRUE)) {
      expect_identical(sort_knn_graph(f$enn, vals, decreasing = dec, enforce_self_first = self),
                       ref_sort(f$enn, vals, dec, self))
    }
  }
  expect_identical(sort_knn_graph(f$enn), f$enn)
  t5 <- truncate_graph(f$enn, 5)
  expect_identical(t5, list(idx = f$enn$idx[, 1:5], dist = f$enn$dist[, 1:5]))
  expect_identical(truncate_graph(f$enn), f$enn)
  t1 <- truncate_graph(f$enn, 1)
  expect_equal(dim(t1$idx), c(300, 1))
  expect_error(truncate_graph(f$enn, 21), "'k' \\(21\\) is more than the 20 columns of 'graph'")
})

test_that("narrow graphs, large n_neighbors and wide n_extra work", {
  f <- enn_fixture(n = 40, k = 2)
  expect_equal(dim(f$enn$idx), c(40, 2))
  s <- sort_knn_graph(f$enn)
  expect_identical(s, f$enn)
  expect_error(enn_to_lsnn(f$enn, 2), "scale_to")
  g2 <- enn_to_lsnn(f$enn, 2, scale_from = 2, scale_to = 2)
  expect_identical(g2, f$enn)
  # n_neighbors beyond n - 1 is capped, as is n_extra beyond the graph
  f2 <- enn_fixture(n = 12, k = 12)
  g <- enn_to_lsnn(f2$enn, 50, n_extra = 500)
  expect_graph_format(g, 12, 11)
  expect_identical(g, ref_lsnn(f2$enn, 11, n_extra = 1))
  res <- locally_scaled_knn(f2$X, n_neighbors = 100, nn_kind = "exact", ret_knn = TRUE)
  expect_graph_format(res$lsnn, 12, 11)
  expect_graph_format(res$knn, 12, 11)
})

test_that("locally_scaled_knn composes extended_knn and enn_to_lsnn", {
  set.seed(9)
  X <- clustered(500, 10)
  res <- locally_scaled_knn(X, 15, nn_kind = "exact", ret_knn = TRUE, n_threads = 2)
  enn <- extended_knn(X, 15, 50, nn_kind = "exact")
  expect_identical(res$lsnn, ref_lsnn(enn, 15))
  expect_identical(res$knn, truncate_graph(enn, 15))
  expect_graph_format(res$lsnn, 500, 15)
  expect_identical(locally_scaled_knn(X, 15, nn_kind = "exact"), res$lsnn)
  # a larger n_extra widens the candidate pool rather than being ignored
  wide <- locally_scaled_knn(X, 15, n_extra = 80, nn_kind = "exact")
  expect_identical(wide, ref_lsnn(extended_knn(X, 15, 80, nn_kind = "exact"), 15, n_extra = 81))
})

test_that("rows of duplicates floor sigma and stay finite", {
  X <- rbind(matrix(1, 10, 3), matrix(rnorm(60), 20))
  enn <- extended_knn(X, 12, 0, nn_kind = "exact")
  lsd <- locally_scaled_distances(enn$idx, enn$dist)
  expect_true(all(is.finite(lsd)))
  expect_identical(lsd, ref_scaled(enn$idx, enn$dist))
  g <- enn_to_lsnn(enn, 5)
  expect_graph_format(g, 30, 5)
  expect_true(all(is.finite(g$dist)))
  Z <- matrix(0, 8, 2)
  gz <- locally_scaled_knn(Z, 3, nn_kind = "exact")
  expect_equal(gz$idx[1, ], 1:3)
  expect_true(all(gz$dist == 0))
})

test_that("neighbor_overlap counts shared neighbours", {
  # rows 1 and 2 differ: {1,2,3} vs {1,3,2} -> 1; {2,1,3} vs {2,1,4} -> 2/3;
  # rows 3 and 4 agree
  i1 <- rbind(c(1L, 2L, 3L), c(2L, 1L, 3L), c(3L, 1L, 2L), c(4L, 1L, 2L))
  i2 <- rbind(c(1L, 3L, 2L), c(2L, 1L, 4L), c(3L, 1L, 2L), c(4L, 1L, 2L))
  g1 <- list(idx = i1, dist = matrix(0, 4, 3))
  g2 <- list(idx = i2, dist = matrix(0, 4, 3))
  expect_equal(neighbor_overlap(g1, g2), (1 + 2 / 3 + 2) / 4)
  expect_equal(neighbor_overlap(g1, g2, k = 1), 1)
  expect_equal(neighbor_overlap(g1, g1), 1)
  # bare index matrices (as rnndescent's neighbor_overlap() takes) and
  # uwot's nested nn output
  expect_equal(neighbor_overlap(i1, i2), neighbor_overlap(g1, g2))
  expect_equal(neighbor_overlap(list(euclidean = g1), g2), neighbor_overlap(g1, g2))
  expect_error(neighbor_overlap(list(euclidean = g1, cosine = g1), g2),
               "'g1' holds 2 graphs \\(euclidean, cosine\\): choose one, e.g. g1\\$euclidean")
  expect_error(neighbor_overlap(g1, g2, k = 4), "at most 3")
  expect_error(neighbor_overlap(g1, list(idx = matrix(1L, 3, 1))), "same number of rows")
  # indices outside 1..n, fractional or NA
  for (bad in list(0L, 5L, 1e9, -1)) {
    expect_error(neighbor_overlap(replace(i1, 2, bad), i2),
                 "'g1' must contain row numbers from 1 to 4 \\(row 2\\)")
  }
  expect_error(neighbor_overlap(g1, list(idx = replace(i2, 3, 1.5))),
               "'g2\\$idx' must contain whole numbers \\(row 3\\)")
  expect_error(neighbor_overlap(replace(i1, 4, NA), i2), "'g1' contains NA \\(row 4\\)")
  expect_error(neighbor_overlap("a", i2), "'g1' must be a graph")
})

test_that("malformed graphs give clear errors", {
  f <- enn_fixture(n = 30, k = 10)
  g <- f$enn
  expect_error(enn_to_lsnn(g), "n_neighbors")
  expect_error(enn_to_lsnn(g, 0), "at least 1")
  expect_error(enn_to_lsnn(g, 3, scale_from = 6, scale_to = 5), "scale_from")
  expect_error(enn_to_lsnn(g, 3, scale_to = 11), "beyond")
  expect_error(enn_to_lsnn(list(idx = g$idx), 3), "list with matrices")
  expect_error(enn_to_lsnn(data.frame(idx = 1, dist = 1), 3), "list with matrices")
  bad <- g
  bad$dist <- bad$dist[, -1]
  expect_error(enn_to_lsnn(bad, 3), "same dimensions")
  bad <- g
  bad$idx[2, 3] <- 31L
  expect_error(enn_to_lsnn(bad, 3), "from 1 to 30")
  bad$idx[2, 3] <- 0L
  expect_error(enn_to_lsnn(bad, 3), "from 1 to 30")
  bad$idx[2, 3] <- NA
  expect_error(enn_to_lsnn(bad, 3), "NA")
  bad <- g
  bad$dist[4, 2] <- -1
  expect_error(enn_to_lsnn(bad, 3), "negative")
  bad$dist[4, 2] <- NaN
  expect_error(enn_to_lsnn(bad, 3), "NA or NaN")
  bad <- g
  bad$idx[, 1] <- bad$idx[, 2]
  expect_error(enn_to_lsnn(bad, 3), "first column")
  expect_error(locally_scaled_distances(g$idx, g$dist[, 1:5]), "same dimensions")
  expect_error(locally_scaled_distances(g$idx, g$dist, scale_to = 12), "beyond")
  expect_error(sort_knn_graph(g, sort_values = matrix(0, 2, 2)), "dimensions")
  expect_error(locally_scaled_knn(matrix(rnorm(12), 6), 2, nn_kind = "exact"), "scale_to")
})
