# Graphs of data in row shards against the in-memory functions, under the
# plans users run: sequential, local worker processes and socket workers.

# Shards in the session's temporary directory (removed when it ends).
shard_dir <- function(X, rows_per_shard) write_shards(X, tempfile("shards-"), rows_per_shard)

clustered <- function(n, d, n_clusters = 8) {
  centres <- matrix(stats::rnorm(n_clusters * d, sd = 4), n_clusters)
  centres[sample.int(n_clusters, n, replace = TRUE), ] + matrix(stats::rnorm(n * d), n)
}

test_that("write_shards, shard_set and check_shards describe and check the shards", {
  set.seed(1)
  X <- matrix(rnorm(250 * 3), 250)
  dir <- tempfile("shards-")
  on.exit(unlink(dir, recursive = TRUE))
  sh <- write_shards(X, dir, 100)
  expect_s3_class(sh, "lsnn_shards")
  expect_equal(sh$rows, c(100L, 100L, 50L))
  expect_equal(sh$n, 250)
  expect_equal(sh$n_col, 3L)
  expect_identical(do.call(rbind, lapply(sh$files, readRDS)), X)
  expect_identical(shard_set(dir), sh)
  expect_identical(shard_set(sh$files), sh)
  expect_output(print(sh), "250 rows x 3 columns in 3 files")
  expect_invisible(check_shards(sh))
  expect_error(write_shards(X, dir, 100), "already holds 3 shards")
  expect_error(write_shards(X, dir, 0), "'rows_per_shard' must be at least 1")
  expect_error(write_shards(list(1), tempfile()), "'X'")

  Y <- X[1:100, ]
  Y[7, 2] <- NA
  saveRDS(Y, sh$files[1])
  expect_error(check_shards(sh), "shard-00001.rds' contains 1 NA, NaN or infinite values \\(first in row 7\\)")
  saveRDS(X[1:100, 1:2], sh$files[2])
  expect_error(check_shards(sh), "more shards have problems")
  expect_error(shard_set(sh$files), "shard-00002.rds' has 2 columns")
  saveRDS(letters, sh$files[3])
  expect_error(check_shards(sh$files[3]), "is not a numeric matrix")
  expect_error(shard_set(file.path(dir, "none.rds")), "does not exist")
})

test_that("shard sets carry their shards' fingerprints", {
  set.seed(3)
  X <- matrix(rnorm(250 * 3), 250)
  dir <- tempfile("shards-")
  on.exit(unlink(dir, recursive = TRUE))
  sh <- write_shards(X, dir, 100)
  expect_match(sh$fingerprints, "^[0-9a-f]{16}$")
  expect_length(unique(sh$fingerprints), 3)
  # the same values give the same fingerprint, whoever wrote them and as
  # whatever numbers; any change of a value or of the shape gives another
  fp <- lsnn:::shard_fingerprint
  expect_identical(fp(X[1:100, ]), sh$fingerprints[1])
  expect_identical(shard_set(sh$files)$fingerprints, sh$fingerprints)
  I <- matrix(1:12, 4)
  expect_identical(fp(I), fp(I + 0))
  Y <- X[1:100, ]
  Y[57, 2] <- Y[57, 2] * (1 + 1e-15)
  expect_false(fp(Y) == sh$fingerprints[1])
  expect_false(fp(matrix(X[1:100, ], 50)) == sh$fingerprints[1])
  expect_false(fp(X[c(2, 1, 3:100), ]) == sh$fingerprints[1])
  expect_false(fp(matrix(0, 3, 0)) == fp(matrix(0, 0, 3)))
  # rows copied and fingerprinted in pieces, as one pass over the whole
  Z <- matrix(rnorm(5001 * 3), 5001, dimnames = list(NULL, c("a", "b", "c")))
  zs <- write_shards(Z, file.path(dir, "z"), 4999)
  expect_identical(zs$fingerprints, c(fp(Z[1:4999, ]), fp(Z[5000:5001, ])))
  expect_identical(readRDS(zs$files[2]), Z[5000:5001, ])
  # an index written before fingerprints: check_shards() computes them
  index <- readRDS(file.path(dir, "shards.rds"))
  index$fingerprints <- NULL
  saveRDS(index, file.path(dir, "shards.rds"))
  old <- shard_set(dir)
  expect_identical(old$fingerprints, rep(NA_character_, 3))
  expect_identical(check_shards(old), sh)
  # a set whose shard changed since it was made
  saveRDS(Y, sh$files[1])
  expect_error(check_shards(sh), paste0("shard file '.*shard-00001.rds' has changed since its ",
                                        "fingerprint was recorded .*shard_set\\(\\)"))
  expect_error(extended_knn_sharded(sh, 5, 5, nn_kind = "exact"), "shard-00001.rds' has changed")
  saveRDS(X[1:100, ], sh$files[1])
  saveRDS(X[1:99, ], sh$files[2])
  expect_error(check_shards(sh), "shard-00002.rds' has 99 rows, the set says 100")
  # the shards described anew
  expect_identical(check_shards(shard_set(sh$files))$rows, c(100L, 99L, 50L))
})

test_that("errors about directories and files name the path and the argument", {
  set.seed(4)
  X <- matrix(rnorm(60 * 3), 60)
  file <- tempfile()
  writeLines("a file", file)
  on.exit(unlink(file), add = TRUE)
  expect_error(write_shards(X, file, 20),
               paste0("'dir' \\(", file, "\\) is a file, not a directory"))
  sh <- shard_dir(X, 20)
  expect_error(extended_knn_sharded(sh, 5, 5, nn_kind = "exact", out_dir = file),
               paste0("'out_dir' \\(", file, "\\) is a file, not a directory"))
  out <- tempfile("graph-")
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  res <- locally_scaled_knn_sharded(sh, 5, 5, nn_kind = "exact", out_dir = out)
  expect_error(read_graph_shards(file), paste0("'x' \\(", file, "\\) is not a directory"))
  for (which in list(1.5, 0, 4, numeric(), NA, "1")) {
    expect_error(read_graph_shards(out, which = which),
                 "'which' must be whole shard numbers between 1 and 3")
  }
  expect_identical(read_graph_shards(out, which = 3:2)$idx,
                   read_graph_shards(out)$idx[c(41:60, 21:40), ])
  unlink(res$files[2])
  expect_error(read_graph_shards(out),
               "graph file '.*lsnn-00002.rds' of 'x' does not exist; run the search again")
  expect_identical(read_graph_shards(out, which = 1), read_graph_shards(res, which = 1))
  # a shard whose rows are not those the set records: before any task
  saveRDS(X[21:39, ], sh$files[2])
  expect_error(extended_knn_sharded(sh, 5, 5, nn_kind = "exact"),
               "^shard file '.*shard-00002.rds' has 19 rows, the set says 20$")
})

test_that("the exact sharded graph is identical to extended_knn(nn_kind = \"exact\")", {
  set.seed(2)
  n <- 700
  # not float-exact, float-exact (small integers) and mixed: only the
  # middle shards float-exact; with duplicates across shards for the ties
  X <- matrix(rnorm(n * 6), n)
  ints <- matrix(sample(0:3, n * 6, replace = TRUE), n)
  mixed <- X
  mixed[201:500, ] <- ints[201:500, ]
  mixed[650, ] <- mixed[20, ]
  for (data in list(X, ints, mixed)) {
    sh <- shard_dir(data, 200)
    for (metric in c("euclidean", "cosine", "correlation", "manhattan")) {
      g <- extended_knn_sharded(sh, 12, 5, nn_kind = "exact", metric = metric)
      expect_identical(g, extended_knn(data, 12, 5, nn_kind = "exact", metric = metric))
    }
  }
  # a shard against the shards after it one, two and all at a time
  sh <- shard_dir(mixed, 100)
  for (rows_per_task in c(1, 250, 1e6)) {
    g <- extended_knn_sharded(sh, 12, 5, nn_kind = "exact",
                              control = shard_control(rows_per_task = rows_per_task))
    expect_identical(g, extended_knn(mixed, 12, 5, nn_kind = "exact"))
  }
  expect_equal(lengths(lapply(lsnn:::later_shard_groups(c(100, 100, 100, 50, 100), 250), `[[`, "r")),
               c(3, 1, 3, 2, 1))
  # k beyond a shard's rows, and all other rows
  sh <- shard_dir(X[1:60, ], 13)
  expect_identical(extended_knn_sharded(sh, 30, 0, nn_kind = "exact"),
                   extended_knn(X[1:60, ], 30, 0, nn_kind = "exact"))
  expect_identical(extended_knn_sharded(sh, 100, 0, nn_kind = "exact"),
                   extended_knn(X[1:60, ], 100, 0, nn_kind = "exact"))
})

test_that("the sharded LSNN graph is identical to locally_scaled_knn(nn_kind = \"exact\")", {
  set.seed(3)
  X <- clustered(600, 5)
  X[400, ] <- X[3, ]
  sh <- shard_dir(X, 150)
  for (nn in c(1, 2, 15)) {
    expect_identical(locally_scaled_knn_sharded(sh, nn, 20, nn_kind = "exact"),
                     locally_scaled_knn(X, nn, 20, nn_kind = "exact"))
  }
  expect_identical(locally_scaled_knn_sharded(sh, 10, 30, scale_from = 2, scale_to = 4,
                                              nn_kind = "exact", metric = "cosine"),
                   locally_scaled_knn(X, 10, 30, scale_from = 2, scale_to = 4,
                                      nn_kind = "exact", metric = "cosine"))
  expect_error(locally_scaled_knn_sharded(sh, 3, 1, nn_kind = "exact"), "'scale_to' \\(7\\)")
})

test_that("the approximate sharded graph reaches the recall target and is reproducible", {
  set.seed(4)
  X <- clustered(3000, 8)
  sh <- shard_dir(X, 500)
  ctl <- shard_control(rows_per_partition = 600, recall_rows = 300)
  set.seed(5)
  out <- tempfile("graph-")
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  res <- extended_knn_sharded(sh, 20, 5, out_dir = out, control = ctl)
  expect_s3_class(res, "lsnn_graph_shards")
  expect_gte(res$recall[length(res$recall)], 0.99)
  g <- read_graph_shards(res)
  truth <- extended_knn(X, 20, 5, nn_kind = "exact")
  expect_gte(mean(g$dist[, -1] <= truth$dist[, 26]), 0.99)
  # the estimate (counted by the merges) is that of the sampled rows' lists
  sampled <- readRDS(file.path(out, "recall.rds"))$truth
  expect_equal(res$recall[length(res$recall)],
               mean(g$dist[sampled$rows, -1] <= sampled$dist[, 25]))
  expect_equal(g$idx[, 1], seq_len(3000))
  expect_true(all(g$dist[, 1] == 0))
  expect_true(all(apply(g$dist, 1, function(d) !is.unsorted(d))))
  expect_true(all(apply(g$idx, 1, anyDuplicated) == 0))
  expect_identical(read_graph_shards(out, which = 2)$idx, g$idx[501:1000, ])
  set.seed(5)
  expect_identical(extended_knn_sharded(sh, 20, 5, control = ctl), g)
  set.seed(6)
  lsnn <- locally_scaled_knn_sharded(sh, 10, 15, control = ctl)
  expect_equal(dim(lsnn$idx), c(3000L, 10L))
  # partitions in each metric's geometry
  for (metric in c("cosine", "correlation", "manhattan")) {
    g <- extended_knn_sharded(sh, 10, 5, metric = metric, control = ctl)
    truth <- extended_knn(X, 10, 5, nn_kind = "exact", metric = metric)
    expect_gte(mean(g$dist[, -1] <= truth$dist[, 16] + 1e-12), 0.99)
  }
})

test_that("each partition is searched by the search partition_search names", {
  expect_error(shard_control(partition_search = "tree"), "'partition_search' must be one of")
  set.seed(14)
  X <- clustered(3000, 8)
  sh <- shard_dir(X, 500)
  truth <- extended_knn(X, 20, 5, nn_kind = "exact")
  # one partition: the partitioned exact search gives the exact graph, where
  # a weak approximate search does not
  weak <- approx_control(n_trees = 1, leaf_size = 30, n_iters = 0)
  one <- shard_control(rows_per_partition = 3000, partition_search = "partition")
  expect_identical(extended_knn_sharded(sh, 20, 5, control = one, nn_args = weak, seed = 1), truth)
  one$partition_search <- "approx"
  expect_lt(mean(extended_knn_sharded(sh, 20, 5, control = one, nn_args = weak, seed = 1)$dist[, -1] <=
                   truth$dist[, 26]), 0.99)
  # several: each partition's lists are exact, the same on any number of
  # threads; the approximate search of the partitions reaches the target too
  several <- shard_control(rows_per_partition = 600, recall_rows = 300,
                           partition_search = "partition")
  g1 <- extended_knn_sharded(sh, 20, 5, control = several, n_threads = 1, seed = 2)
  g2 <- extended_knn_sharded(sh, 20, 5, control = several, n_threads = 2, seed = 2)
  expect_identical(g1, g2)
  expect_gte(mean(g1$dist[, -1] <= truth$dist[, 26]), 0.99)
  approx <- shard_control(rows_per_partition = 600, recall_rows = 300, partition_search = "approx")
  ga <- extended_knn_sharded(sh, 20, 5, control = approx, seed = 2)
  expect_gte(mean(ga$dist[, -1] <= truth$dist[, 26]), 0.99)
})

test_that("the search between two shards gives both exact queries at once", {
  set.seed(23)
  a <- round(matrix(rnorm(700 * 5), 700), 1)
  b <- round(matrix(rnorm(300 * 5), 300), 1)
  b[1:20, ] <- a[1:20, ]  # copies across the blocks and many tied distances
  for (metric in c("euclidean", "cosine", "manhattan")) {
    both <- lsnn:::.knn_between_dense(a, b, 25, 40, metric, 2L, lsnn:::simd_option(), numeric(),
                                      numeric())
    qa <- lsnn:::shard_block_knn(a, b, 25, metric)
    qb <- lsnn:::shard_block_knn(b, a, 40, metric)
    expect_identical(both$a$idx - 700L, qa$idx)
    expect_identical(both$a$dist, qa$dist)
    expect_identical(both$b$idx, qb$idx)
    expect_identical(both$b$dist, qb$dist)
  }
  # more neighbours than the other block has rows
  both <- lsnn:::.knn_between_dense(a[1:10, ], b, 300, 10, "euclidean", 1L, lsnn:::simd_option(),
                                    numeric(), numeric())
  expect_equal(dim(both$a$idx), c(10L, 300L))
  expect_setequal(both$a$idx[1, ], 11:310)
  expect_error(lsnn:::.knn_between_dense(a, b, 301, 10, "euclidean", 1L, lsnn:::simd_option(),
                                         numeric(), numeric()),
               "k must be between 1")
})

test_that("bounds keep a row's candidates within them and nothing nearer is lost", {
  set.seed(24)
  a <- round(matrix(rnorm(600 * 5), 600), 1)
  b <- round(matrix(rnorm(400 * 5), 400), 1)
  b[1:20, ] <- a[1:20, ]
  for (metric in c("euclidean", "cosine", "manhattan")) {
    full <- lsnn:::.knn_between_dense(a, b, 30, 30, metric, 2L, lsnn:::simd_option(), numeric(),
                                      numeric())
    # bounds at, between and beyond the full lists' distances; Inf for none
    bound_a <- full$a$dist[cbind(1:600, sample(30, 600, TRUE))]
    bound_a[1:50] <- Inf
    bound_a[51:60] <- 0
    bound_b <- full$b$dist[, 10] * runif(400, 0.5, 1.5)
    both <- lsnn:::.knn_between_dense(a, b, 30, 30, metric, 2L, lsnn:::simd_option(), bound_a,
                                      bound_b)
    for (side in list(list(g = both$a, f = full$a, bound = bound_a),
                      list(g = both$b, f = full$b, bound = bound_b))) {
      g <- side$g
      expect_true(all((g$idx == 0) == is.infinite(g$dist)))
      # each list is the start of the full list, at least as far as the bound
      listed <- g$idx > 0
      expect_identical(g$idx[listed], side$f$idx[listed])
      expect_identical(g$dist[listed], side$f$dist[listed])
      expect_true(all(t(apply(listed, 1, cummin)) == listed))
      expect_true(all(rowSums(listed) >= rowSums(side$f$dist <= side$bound)))
      expect_true(any(rowSums(listed) < 30))
    }
    expect_identical(both$a$idx[1:50, ], full$a$idx[1:50, ])
  }
  expect_error(lsnn:::.knn_between_dense(a, b, 5, 5, "euclidean", 1L, lsnn:::simd_option(),
                                         c(1, NaN, rep(1, 598)), numeric()),
               "'bound_a' must be non-negative numbers")
  expect_error(lsnn:::.knn_between_dense(a, b, 5, 5, "euclidean", 1L, lsnn:::simd_option(),
                                         numeric(), 1:3),
               "'bound_b' must be empty or hold one value per row")
})

test_that("candidate lists merge by (distance, row), each row once, self left out", {
  set.seed(21)
  n <- 40
  blocks <- lapply(1:3, function(b) {
    rows <- sample.int(n, 30, replace = TRUE)
    idx <- matrix(sample.int(60, 30 * 6, replace = TRUE), 30)
    idx[sample.int(length(idx), 10)] <- 0L
    # a candidate's distance depends on the pair only; ties are common
    list(rows = rows, idx = idx, dist = matrix(round(abs(sin(rows * 7 + idx)), 1), 30))
  })
  self <- sample.int(60, n)
  res <- lsnn:::merge_candidates(blocks, n, 5, self)
  row <- unlist(lapply(blocks, function(b) rep(b$rows, ncol(b$idx))))
  id <- unlist(lapply(blocks, function(b) as.vector(b$idx)))
  dist <- unlist(lapply(blocks, function(b) as.vector(b$dist)))
  for (i in seq_len(n)) {
    keep <- row == i & id > 0 & id != self[i]
    cand <- unique(data.frame(id = id[keep], dist = dist[keep]))
    cand <- cand[order(cand$dist, cand$id), ][seq_len(min(5, nrow(cand))), ]
    expect_identical(res$idx[i, seq_len(nrow(cand))], cand$id)
    expect_identical(res$dist[i, seq_len(nrow(cand))], cand$dist)
    if (nrow(cand) < 5) expect_true(all(res$idx[i, -seq_len(nrow(cand))] == 0L))
  }
  expect_identical(res$short, if (any(res$idx[, 5] == 0L)) which(res$idx[, 5] == 0L)[1] else 0L)
  bad <- blocks[1]
  bad[[1]]$rows[1] <- n + 1L
  expect_error(lsnn:::merge_candidates(bad, n, 5), "outside 1..n")
  bad <- blocks[1]
  bad[[1]]$dist[1] <- NaN
  expect_error(lsnn:::merge_candidates(bad, n, 5), "NaN")
})

test_that("partitions are split to their size and overlap only near boundaries", {
  set.seed(22)
  # one dense cluster holding most rows, which k-means alone leaves whole
  X <- rbind(matrix(rnorm(6000 * 4, sd = 0.5), 6000), clustered(2000, 4))
  sh <- shard_dir(X, 2000)
  run <- lsnn:::sharded_run(sh, 10, 0, "approx", "euclidean", NULL, 1L, FALSE, approx_control(),
                            shard_control(rows_per_partition = 1000, overlap = 0.25,
                                          sample_rows = 4000), lsnn = NULL)
  on.exit(unlink(run$dir, recursive = TRUE), add = TRUE)
  parts <- lsnn:::partition_centres(run, 1L, 8L)
  centres <- parts$centres
  partition_of <- function(x, centres, limit) {
    lsnn:::keep_second(lsnn:::two_nearest(x, centres), limit)
  }
  expect_identical(parts$shares, 0.25)
  near <- partition_of(X, centres, parts$limits)
  expect_gt(nrow(centres), 8)
  expect_lt(max(lsnn:::partition_sizes(near, nrow(centres))), 1.5 * 1000 * 1.25)
  both <- !is.na(near$second)
  expect_equal(mean(both), 0.25, tolerance = 0.1)
  d <- sqrt(pmax(outer(rowSums(X^2), rowSums(centres^2), "+") - 2 * tcrossprod(X, centres), 0))
  nearest <- t(apply(d, 1, order))[, 1:2]
  expect_identical(near$first, nearest[, 1])
  expect_identical(near$second[both], nearest[both, 2])
  # the rows searched twice are those nearest a boundary
  excess <- d[cbind(seq_len(nrow(X)), nearest[, 2])] / d[cbind(seq_len(nrow(X)), nearest[, 1])] - 1
  expect_lt(max(excess[both]), min(excess[!both]) + 1e-12)
  expect_equal(sum(lsnn:::partition_sizes(near, nrow(centres))), nrow(X) + sum(both))
  expect_true(all(is.na(partition_of(X, centres, -Inf)$second)))
  expect_false(anyNA(partition_of(X, centres, Inf)$second))
  expect_error(shard_control(overlap = -1), "'overlap' must be between 0 and 1")
})

test_that("the overlap is the least that keeps the sampled rows' neighbours in their partitions", {
  partitions <- list(shares = c(0, 0.1, 0.2), limits = c(-Inf, 0.05, 0.3))
  near <- data.frame(row = c(11, 12, 13, 14), first = c(1L, 1L, 2L, 2L), second = c(2L, 2L, 1L, 1L),
                     excess = c(0.01, 0.2, 0.5, 0.04))
  # row 11's neighbour 13 shares partition 2 once row 11 is also there
  # (limit 0.05); row 13's neighbour 12 shares partition 2 once row 12 is
  # (limit 0.3)
  truth <- list(rows = c(11, 13), idx = matrix(c(13, 12), 2))
  ctl <- shard_control()
  expect_equal(lsnn:::choose_overlap(partitions, near, truth, ctl),
               list(share = 0.2, limit = 0.3, coverage = 1))
  # none enough: the largest share
  expect_equal(lsnn:::choose_overlap(lapply(partitions, `[`, 1:2), near, truth, ctl),
               list(share = 0.1, limit = 0.05, coverage = 0.5))
  # rows not reported are left out of the count
  expect_equal(lsnn:::choose_overlap(partitions, near[-2, ], truth, ctl)$share, 0.1)

  set.seed(9)
  # two clusters far apart, one per partition: no overlap
  X <- clustered(2400, 6, n_clusters = 2) * 5
  res <- extended_knn_sharded(shard_dir(X, 600), 15, 0, out_dir = tempfile("graph-"),
                              control = shard_control(rows_per_partition = 1200, recall_rows = 300))
  on.exit(unlink(dirname(res$files[1]), recursive = TRUE), add = TRUE)
  expect_identical(res$overlap, 0)
  expect_identical(res$recall, 1)
  expect_output(print(res), "recall by round: 1 \nrows also in a second partition, by round: 0%")
  # one square cut in four: the rows near the cuts
  Y <- matrix(runif(2400 * 2), 2400)
  res <- extended_knn_sharded(shard_dir(Y, 600), 15, 0, out_dir = tempfile("graph-"),
                              control = shard_control(rows_per_partition = 600, recall_rows = 300))
  on.exit(unlink(dirname(res$files[1]), recursive = TRUE), add = TRUE)
  expect_gte(res$overlap[1], 0.03)
  expect_gte(res$recall[length(res$recall)], 0.99)
})

test_that("the scales are exchanged in groups of consecutive shards of similar rows", {
  groups <- function(rows) lsnn:::scale_groups(list(shards = list(rows = rows)))
  # 2.5e7 rows: three groups (under a plan of one worker)
  g <- groups(rep(1e5, 250))
  expect_identical(rle(g)$values, 1:3)
  expect_true(all(abs(rle(g)$lengths - 250 / 3) <= 1))
  expect_identical(groups(c(10, 10, 10)), c(1L, 1L, 1L))
  expect_identical(groups(rep(4e6, 5)), c(1L, 1L, 2L, 2L, 2L))
  skip_if_quick()  # (a pool of worker processes)
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  expect_identical(groups(c(10, 10, 10)), c(1L, 2L, 2L))
})

test_that("the recall estimate adds the merges' counts, or counts from the graph shard", {
  dir <- tempfile("run-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  work <- file.path(dir, "work", "round-1")
  dir.create(work, recursive = TRUE)
  run <- list(shards = list(files = c("a", "b"), rows = c(3L, 2L)), k = 3L, dir = dir)
  # sampled rows 2 (shard 1) and 4, 5 (shard 2), true 2nd-neighbour distances
  truth <- list(rows = c(2, 4, 5), dist = cbind(c(1, 1, 1), c(2, 3, 1)))
  g2 <- list(idx = matrix(c(4L, 5L, 5L, 4L, 1L, 2L), 2), dist = matrix(c(0, 0, 1, 1, 3, 2), 2))
  saveRDS(g2, file.path(work, "graph-00002.rds"))
  saveRDS(1, file.path(work, "found-00001.rds"))
  # shard 2 from its graph: row 4 at distances 1 and 3 (both within 3),
  # row 5 at 1 and 2 (one within 1)
  expect_equal(lsnn:::estimate_recall(run, 1L, truth), (1 + 3) / 6)
  expect_equal(lsnn:::truth_of_shard(run, truth, 2L), list(rows = 1:2, bound = c(3, 1)))
})

test_that("the recall estimate's exact rows are the rows' exact neighbours", {
  set.seed(12)
  X <- clustered(500, 6)
  X[450, ] <- X[10, ]
  sh <- shard_dir(X, 120)
  run <- lsnn:::sharded_run(sh, 12, 3, "approx", "euclidean", NULL, 1L, FALSE, approx_control(),
                            shard_control(recall_rows = 60), lsnn = NULL)
  on.exit(unlink(run$dir, recursive = TRUE), add = TRUE)
  truth <- lsnn:::exact_rows_phase(run)
  g <- extended_knn(X, 12, 3, nn_kind = "exact")
  expect_length(truth$rows, 60)
  expect_identical(truth$idx, g$idx[truth$rows, -1])
  expect_identical(truth$dist, g$dist[truth$rows, -1])
})

test_that("a run resumes from its out_dir and refuses other settings", {
  set.seed(7)
  X <- matrix(rnorm(400 * 4), 400)
  sh <- shard_dir(X, 100)
  out <- tempfile("graph-")
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  res <- locally_scaled_knn_sharded(sh, 10, 10, nn_kind = "exact", out_dir = out)
  # 4 shards' own searches, 3 of a shard against the shards after it (each
  # pair of rows searched once, both ways), 4 merges; for the LSNN, 4 shards'
  # scale requests, the answers of one group of shards (one worker), 4 LSNN
  expect_equal(nrow(res$tasks), 4 + 3 + 4 + 4 + 1 + 4)
  expect_equal(sum(res$tasks$phase == "locally scaled neighbours: scale answers"), 1)
  expect_output(print(res), "LSNN\\) graph in shards: 400 rows x 10 columns in 4 files")
  # a lost output is computed again, and only that
  unlink(c(res$files[2], res$knn$files[3], file.path(out, "complete.rds")))
  res2 <- locally_scaled_knn_sharded(sh, 10, 10, nn_kind = "exact", out_dir = out)
  # shard 3's own search and the 3 searches it is in (without the other
  # shards' bounds, which went with the finished run's work files), its
  # merge, and shard 2's scale requests, their answers and its LSNN
  expect_equal(nrow(res2$tasks), 20 + 1 + 3 + 1 + 3)
  expect_identical(read_graph_shards(res2), locally_scaled_knn(X, 10, 10, nn_kind = "exact"))
  expect_identical(read_graph_shards(res2$knn), extended_knn(X, 10, 10, nn_kind = "exact"))
  expect_error(locally_scaled_knn_sharded(sh, 11, 10, nn_kind = "exact", out_dir = out),
               paste0("holds a run with other settings: n_neighbors \\(recorded 10, given 11\\); ",
                      "to start afresh"))
  expect_error(locally_scaled_knn_sharded(sh, 10, 12, scale_to = 8, nn_kind = "exact",
                                          out_dir = out),
               paste0("other settings: n_extra \\(recorded 10, given 12\\); scale_to ",
                      "\\(recorded 7, given 8\\); to start afresh"))
  expect_error(locally_scaled_knn_sharded(sh, 10, 10, nn_kind = "exact", out_dir = out,
                                          metric = "cosine"),
               "holds a run with other settings: metric \\(recorded \"euclidean\", given \"cosine\"\\); to start afresh")
  expect_error(extended_knn_sharded(sh, 10, 10, nn_kind = "exact", out_dir = out),
               "holds a run of locally_scaled_knn_sharded\\(\\); to start afresh")
  expect_error(read_graph_shards(tempdir()), "holds no finished sharded graph")
})

test_that("a run resumes only on the data it was begun with", {
  set.seed(13)
  d <- tempfile("shards-")
  o <- tempfile("graph-")
  on.exit(unlink(c(d, o), recursive = TRUE), add = TRUE)
  X1 <- matrix(rnorm(1500), 300)
  X2 <- matrix(rnorm(1500), 300)
  extended_knn_sharded(write_shards(X1, d, 100), 10, 5, nn_kind = "exact", out_dir = o)
  s2 <- write_shards(X2, d, 100, overwrite = TRUE)
  expect_error(extended_knn_sharded(s2, 10, 5, nn_kind = "exact", out_dir = o),
               paste0("'out_dir' \\(", o, "\\) holds a run made for other data: shard 1 ",
                      "\\('.*shard-00001.rds'\\) has changed since the run began \\(and 2 more ",
                      "shards\\); to start afresh, delete it or give another 'out_dir'"))
  o2 <- tempfile("graph-")
  on.exit(unlink(o2, recursive = TRUE), add = TRUE)
  g <- read_graph_shards(extended_knn_sharded(s2, 10, 5, nn_kind = "exact", out_dir = o2))
  expect_identical(g, extended_knn(X2, 10, 5, nn_kind = "exact"))
  # one shard changed; other numbers of shards; a directory of an earlier
  # version's run
  s3 <- write_shards(rbind(X2[1:200, ], X1[201:300, ]), d, 100, overwrite = TRUE)
  expect_error(extended_knn_sharded(s3, 10, 5, nn_kind = "exact", out_dir = o2),
               "made for other data: shard 3 \\('.*shard-00003.rds'\\) has changed[^(]*$")
  s4 <- write_shards(X2, d, 50, overwrite = TRUE)
  expect_error(extended_knn_sharded(s4, 10, 5, nn_kind = "exact", out_dir = o2),
               "holds a run made for 3 shards, and 'shards' has 6; to start afresh")
  run <- readRDS(file.path(o2, "run.rds"))
  run$settings$format <- 2L
  saveRDS(run, file.path(o2, "run.rds"))
  s2 <- write_shards(X2, d, 100, overwrite = TRUE)
  expect_error(extended_knn_sharded(s2, 10, 5, nn_kind = "exact", out_dir = o2),
               "holds a run begun by another version of lsnn")
})

test_that("a task is done when its outputs exist, or the later results made from them", {
  dir <- tempfile("run-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  f <- file.path(dir, c("a.rds", "b.rds", "merged.rds"))
  task <- lsnn:::shard_task("t", out = f[1:2], input = list(), done_if = f[c(3, 3)])
  plain <- lsnn:::shard_task("t", out = f[1:2], input = list())
  expect_false(lsnn:::task_done(task))
  file.create(f[1])
  expect_false(lsnn:::task_done(task))
  file.create(f[2])
  expect_true(lsnn:::task_done(task))
  expect_true(lsnn:::task_done(plain))
  # the outputs consumed by a later result
  unlink(f[1:2])
  file.create(f[3])
  expect_true(lsnn:::task_done(task))
  expect_false(lsnn:::task_done(plain))
  # a run's files, from its one layout
  run <- list(dir = dir, shards = list(files = letters[1:3]), lsnn = list())
  expect_identical(lsnn:::shard_paths(run, "graph", s = 2),
                   file.path(dir, "knn/graph-00002.rds"))
  expect_identical(lsnn:::graph_out(run, 3, round = 2),
                   c(graph = file.path(dir, "work/round-2/graph-00003.rds"),
                     sigma = file.path(dir, "work/round-2/sigma-00003.rds")))
  expect_identical(lsnn:::run_path(run, "bucket", 1, 4:5, 2),
                   file.path(dir, c("work/round-1/bucket-4-2.rds", "work/round-1/bucket-5-2.rds")))
})

test_that("the approximate sharded search is seeded once, and a resumed run continues it", {
  set.seed(15)
  sh <- shard_dir(clustered(1200, 5), 300)
  ctl <- shard_control(rows_per_partition = 400, recall_rows = 100)
  before <- .Random.seed
  g <- extended_knn_sharded(sh, 10, 5, control = ctl, seed = 4)
  expect_identical(.Random.seed, before)
  expect_identical(extended_knn_sharded(sh, 10, 5, control = ctl, seed = 4), g)
  set.seed(4)
  expect_identical(extended_knn_sharded(sh, 10, 5, control = ctl), g)
  expect_false(identical(extended_knn_sharded(sh, 10, 5, control = ctl, seed = 5), g))
  # the exact search draws nothing from R's generator
  before <- .Random.seed
  extended_knn_sharded(sh, 10, 5, nn_kind = "exact")
  expect_identical(.Random.seed, before)
  # a run stopped after its first partition's search continues as if it
  # had not stopped
  out <- tempfile("graph-")
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  ns <- asNamespace("lsnn")
  calls <- new.env()
  calls$n <- 0
  suppressMessages(trace("partition_task", where = ns, print = FALSE, tracer = bquote({
    assign("n", get("n", .(calls)) + 1, envir = .(calls))
    if (get("n", .(calls)) == 2) stop("stopped")
  })))
  stopped <- tryCatch(extended_knn_sharded(sh, 10, 5, control = ctl, out_dir = out, seed = 4),
                      error = identity)
  suppressMessages(untrace("partition_task", where = ns))
  expect_match(conditionMessage(stopped), "search partition [0-9]+' failed: stopped")
  expect_true(file.exists(file.path(out, "recall.rds")))
  res <- extended_knn_sharded(sh, 10, 5, control = ctl, out_dir = out, seed = 4)
  expect_identical(read_graph_shards(res), g)
  # (what was done before it stopped was not run again)
  expect_equal(sum(res$tasks$phase == "exact neighbours of sampled rows"), 4)
  expect_equal(sum(res$tasks$phase == "round 1: partitions"), 4)
})

test_that("a task reading a shard that changed during the run stops it", {
  set.seed(14)
  X <- clustered(400, 4)
  sh <- shard_dir(X, 100)
  run <- lsnn:::sharded_run(sh, 10, 0, "approx", "euclidean", NULL, 1L, FALSE, approx_control(),
                            shard_control(recall_rows = 50), lsnn = NULL)
  on.exit(unlink(run$dir, recursive = TRUE), add = TRUE)
  Y <- X[201:300, ]
  Y[1, 1] <- Y[1, 1] + 1
  saveRDS(Y, sh$files[3])
  changed <- "shard file '.*shard-00003.rds' has changed since its fingerprint was recorded"
  # (the approximate search first gathers the rows that estimate its recall)
  expect_error(lsnn:::knn_graph_phase(run), changed)
  expect_error(lsnn:::gather_rows(run$shards, c(5, 250)), changed)
  expect_identical(lsnn:::gather_rows(run$shards, c(5, 150)), X[c(5, 150), ])
  run$nn_kind <- "exact"
  expect_error(lsnn:::knn_graph_phase(run), paste0("task 'exact shard 3' failed: ", changed))
})

test_that("a failed task stops the run with an error naming it", {
  set.seed(8)
  X <- matrix(rnorm(300 * 4), 300)
  sh <- shard_dir(X, 100)
  out <- tempfile("graph-")
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  # (a shard broken after the checks that precede the tasks)
  run <- lsnn:::sharded_run(sh, 5, 5, "exact", "euclidean", out, 1L, FALSE,
                            approx_control(max_candidates = 150, n_trees = 20), shard_control(),
                            lsnn = NULL)
  saveRDS("not a matrix", sh$files[2])
  expect_error(lsnn:::knn_graph_phase(run),
               "task 'exact shard 2' failed: shard file '.*shard-00002.rds' is not a numeric matrix")
  expect_error(extended_knn_sharded(sh, 5, 5, nn_kind = "exact", out_dir = out),
               "^shard file '.*shard-00002.rds' is not a numeric matrix")
  expect_false(file.exists(file.path(out, "complete.rds")))
  expect_error(read_graph_shards(out), "no finished sharded graph")
  saveRDS(X[101:200, ], sh$files[2])
  expect_identical(read_graph_shards(extended_knn_sharded(sh, 5, 5, nn_kind = "exact",
                                                          out_dir = out)),
                   extended_knn(X, 5, 5, nn_kind = "exact"))
})

test_that("sharded graphs are the same on local worker processes", {
  skip_on_cran()
  skip_if_quick()
  set.seed(9)
  X <- clustered(1200, 6)
  sh <- shard_dir(X, 300)
  ctl <- shard_control(rows_per_partition = 500, recall_rows = 100)
  set.seed(10)
  approx <- extended_knn_sharded(sh, 15, 5, control = ctl)
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  expect_identical(locally_scaled_knn_sharded(sh, 10, 15, nn_kind = "exact"),
                   locally_scaled_knn(X, 10, 15, nn_kind = "exact"))
  set.seed(10)
  expect_identical(extended_knn_sharded(sh, 15, 5, control = ctl), approx)
  # a worker that dies gives an error naming its task
  run <- list(verbose = FALSE, simd = "auto", dir = tempfile())
  die <- function(input, out, run) tools::pskill(Sys.getpid(), tools::SIGKILL)
  expect_error(lsnn:::run_tasks(run, "test", list(lsnn:::shard_task("doomed", tempfile(), list())),
                                die),
               "task 'doomed' failed")
})

test_that("sharded graphs are the same on socket workers", {
  skip_on_cran()
  skip_if_quick()
  set.seed(11)
  X <- matrix(rnorm(500 * 5), 500)
  sh <- shard_dir(X, 125)
  old <- future::plan(future::cluster, workers = c("localhost", "localhost"))
  on.exit(future::plan(old), add = TRUE)
  expect_identical(extended_knn_sharded(sh, 10, 10, nn_kind = "exact"),
                   extended_knn(X, 10, 10, nn_kind = "exact"))
  expect_identical(locally_scaled_knn_sharded(sh, 8, 12, nn_kind = "exact"),
                   locally_scaled_knn(X, 8, 12, nn_kind = "exact"))
})

test_that("counts print as numbers, and a refused resume names the setting and both values", {
  expect_identical(lsnn:::show_count(c(3e5, 1e7, 250L)), c("300,000", "10,000,000", "250"))
  set.seed(31)
  X <- matrix(rnorm(300 * 3), 300)
  sh <- shard_dir(X, 100)
  big <- sh
  big$n <- 3e5
  big$rows <- c(1e5, 1e5, 1e5)
  expect_output(print(big), "300,000 rows x 3 columns in 3 files \\(100,000 rows per shard\\)")
  out <- tempfile("graph-")
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  res <- extended_knn_sharded(sh, 5, 5, nn_kind = "exact", out_dir = out,
                              control = shard_control(rows_per_partition = 200000))
  res$n <- 3e5
  expect_output(print(res), "graph in shards: 300,000 rows x 11 columns")
  expect_error(extended_knn_sharded(sh, 5, 5, nn_kind = "exact", out_dir = out),
               paste0("other settings: control\\$rows_per_partition \\(recorded 200,000, ",
                      "given NULL\\); to start afresh"))
  expect_error(extended_knn_sharded(sh, 5, 5, nn_kind = "exact", out_dir = out,
                                    control = list(rows_per_partition = 200000,
                                                   target_recall = 0.9),
                                    nn_args = list(max_candidates = 150, n_trees = 10)),
               paste0("other settings: nn_args\\$n_trees \\(recorded 20, given 10\\); ",
                      "control\\$target_recall \\(recorded 0.99, given 0.9\\); to start"))
  expect_error(extended_knn_sharded(sh, 5, 5, nn_kind = "approx", out_dir = out,
                                    control = list(rows_per_partition = 200000)),
               "other settings: nn_kind \\(recorded \"exact\", given \"approx\"\\)")
  # a record without the arguments as given (an earlier run of this format)
  record <- readRDS(file.path(out, "run.rds"))
  record$given <- NULL
  saveRDS(record, file.path(out, "run.rds"))
  expect_error(extended_knn_sharded(sh, 5, 6, nn_kind = "exact", out_dir = out,
                                    control = list(rows_per_partition = 200000)),
               "n_neighbors \\+ n_extra \\(a graph of 11 columns recorded, of 12 given\\)")
})

test_that("partitions of the approximate search depend on n alone: at least 8 above 200,000 rows", {
  parts <- function(n, ...) ceiling(n / lsnn:::partition_rows(shard_control(...), n))
  expect_identical(vapply(c(1e3, 25000, 40000, 1e5, 3e5, 1.6e6, 1e7), parts, 0),
                   c(1, 1, 2, 4, 8, 8, 50))
  # a number given is kept, as before
  expect_identical(parts(3e5, rows_per_partition = 2e5), 2)
  expect_null(shard_control()$rows_per_partition)
  expect_error(shard_control(rows_per_partition = 1), "rows_per_partition")
})

test_that("an interrupted run stops its workers' tasks, and the plan stays usable", {
  skip_on_cran()
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  # a quick task and one that would run a minute; the interrupt comes when
  # the quick one is collected (as the user's Ctrl-C between two tasks)
  wait <- function(input, out, run) {
    Sys.sleep(input$wait)
    c(read = 0, written = 0)
  }
  environment(wait) <- baseenv()
  tasks <- list(lsnn:::shard_task("quick", tempfile(), list(wait = 0)),
                lsnn:::shard_task("slow", tempfile(), list(wait = 60)))
  run <- list(verbose = FALSE, simd = "auto", dir = tempfile())
  interrupt <- function(name) {
    stop(structure(class = c("interrupt", "condition"), list(message = "", call = NULL)))
  }
  hook <- options(lsnn.task_done_hook = interrupt)
  on.exit(options(hook), add = TRUE)
  start <- proc.time()[["elapsed"]]
  got <- tryCatch(lsnn:::run_tasks(run, "test", tasks, wait),
                  interrupt = function(e) "interrupted")
  options(hook)
  expect_identical(got, "interrupted")
  # the plan's workers answer at once: the slow task's worker was stopped and
  # replaced, not waited for
  pids <- future::value(list(future::future(Sys.getpid()), future::future(Sys.getpid())))
  expect_lt(proc.time()[["elapsed"]] - start, 40)
  expect_true(all(vapply(pids, is.numeric, TRUE)))
  expect_equal(future::nbrOfWorkers(), 2)
  # nothing to stop when every future has finished
  f <- future::future(1)
  future::value(f)
  expect_identical(lsnn:::stop_futures(list(f)), 0L)
})

test_that("sharded graphs are the same as batchtools jobs (future.batchtools)", {
  skip_if_quick()
  skip_on_cran()
  skip_if_not_installed("future.batchtools")
  set.seed(41)
  X <- clustered(400, 4, n_clusters = 4)
  sh <- shard_dir(X, 200)
  ctl <- shard_control(rows_per_partition = 200, recall_rows = 50, max_rounds = 1)
  g_approx <- extended_knn_sharded(sh, 8, 4, control = ctl, seed = 5)
  # (the jobs' registries in a temporary directory, not the working one)
  cache <- options(future.cache.path = tempfile("batchtools-"))
  on.exit(options(cache), add = TRUE)
  old <- future::plan(future.batchtools::batchtools_local)
  on.exit(future::plan(old), add = TRUE)
  # (the approximate search: its recall estimate runs exact tasks too)
  expect_identical(extended_knn_sharded(sh, 8, 4, control = ctl, seed = 5), g_approx)
})
