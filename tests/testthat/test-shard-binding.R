# A sharded graph is bound to the shards it was made from and to the run
# that wrote it: layouts refuse the graph of other data, a run's directory
# is read as itself wherever it is, and a resumed run reuses only files it
# has checked.

future::plan(future::sequential)

test_that("sharded PaCMAP and LocalMAP refuse the graph of other data split the same way", {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  sh <- write_shards(X, tempfile("shards-"), rows_per_shard = 40)
  sh2 <- write_shards(X[nrow(X):1, ], tempfile("shards-"), rows_per_shard = 40)
  out <- c(tempfile("graph-"), tempfile("graph-"))
  on.exit(unlink(c(dirname(sh$files[1]), dirname(sh2$files[1]), out), recursive = TRUE))
  gs2 <- locally_scaled_knn_sharded(sh2, 11, nn_kind = "exact", out_dir = out[1])
  expect_identical(gs2$fingerprints, sh2$fingerprints)
  for (method in c("pacmap", "localmap")) {
    expect_error(neighbor_embedding(sh, method, nn_method = gs2, seed = 1),
                 paste0("^'nn_method' is the graph of other shards than 'X': shard 1 \\('.*",
                        "shard-00001.rds'\\) holds other data than the shard it was made from ",
                        "\\(and 3 more shards\\)"))
    expect_error(neighbor_embedding(sh, method, nn_method = out[1], seed = 1),
                 "'nn_method' is the graph of other shards than 'X'")
  }
  # one shard of other data among the right ones
  gs <- locally_scaled_knn_sharded(sh, 11, nn_kind = "exact", out_dir = out[2])
  mixed <- gs
  mixed$fingerprints[3] <- sh2$fingerprints[3]
  expect_error(neighbor_embedding(sh, "pacmap", nn_method = mixed, seed = 1),
               "shard 3 \\('.*shard-00003.rds'\\) holds other data than the shard it was made from; compute")
  expect_silent(neighbor_embedding(sh, "pacmap", nn_method = gs, seed = 1, phases = c(5, 5, 5)))
  # shards whose index records no fingerprints (an earlier version's) are
  # checked as they are read
  index_file <- file.path(dirname(sh$files[1]), "shards.rds")
  index <- readRDS(index_file)
  index$fingerprints <- NULL
  saveRDS(index, index_file)
  old <- shard_set(dirname(sh$files[1]))
  expect_true(all(is.na(old$fingerprints)))
  expect_error(neighbor_embedding(old, "pacmap", nn_method = gs2, seed = 1),
               "'nn_method' is the graph of other shards than 'X': shard 1 \\('.*shard-00001.rds'\\) holds other data than the shard it was made from; compute")
  expect_identical(neighbor_embedding(old, "pacmap", nn_method = gs, seed = 1,
                                      phases = c(5, 5, 5)),
                   neighbor_embedding(sh, "pacmap", nn_method = gs, seed = 1,
                                      phases = c(5, 5, 5)))
  # a graph that records no fingerprints cannot be bound to its data
  bare <- gs
  bare$fingerprints <- NULL
  expect_error(neighbor_embedding(sh, "pacmap", nn_method = bare, seed = 1),
               "'nn_method' records no fingerprints of the 4 shards it was made from")
})

test_that("sharded PaCMAP keeps the shards' row names, as the layout in memory does", {
  set.seed(21)
  X <- rbind(matrix(rnorm(120 * 4), 120), matrix(rnorm(120 * 4, mean = 3), 120))
  rownames(X) <- paste0("point", seq_len(nrow(X)))
  sh <- write_shards(X, tempfile("shards-"), rows_per_shard = 70)
  out <- tempfile("graph-")
  on.exit(unlink(c(dirname(sh$files[1]), out), recursive = TRUE))
  g <- locally_scaled_knn_sharded(sh, 11, 20, nn_kind = "exact", out_dir = out)
  for (method in c("pacmap", "localmap")) {
    from_shards <- neighbor_embedding(sh, method, nn_method = g, seed = 3, phases = c(10, 10, 10))
    in_memory <- neighbor_embedding(X, method, nn_method = read_graph_shards(g), seed = 3,
                                    phases = c(10, 10, 10))
    expect_identical(rownames(from_shards), rownames(X))
    expect_identical(from_shards, in_memory)
  }
  # and with the extras, whose embedding is named too
  res <- neighbor_embedding(sh, "pacmap", nn_method = g, seed = 3, phases = c(5, 5, 5),
                            ret_extra = TRUE)
  expect_identical(rownames(res$embedding), rownames(X))
})

test_that("a run's directory is read as itself: copied, moved, reused or after setwd()", {
  set.seed(22)
  X1 <- matrix(rnorm(200 * 3), 200)
  X2 <- matrix(rnorm(200 * 3), 200)
  sh1 <- write_shards(X1, tempfile("shards-"), rows_per_shard = 50)
  sh2 <- write_shards(X2, tempfile("shards-"), rows_per_shard = 50)
  o <- tempfile("graph-")
  oc <- tempfile("graph-copy-")
  om <- tempfile("graph-moved-")
  on.exit(unlink(c(dirname(sh1$files[1]), dirname(sh2$files[1]), o, oc, om), recursive = TRUE))
  g1 <- extended_knn(X1, 5, 5, nn_kind = "exact")
  g2 <- extended_knn(X2, 5, 5, nn_kind = "exact")
  extended_knn_sharded(sh1, 5, 5, nn_kind = "exact", out_dir = o)
  dir.create(oc)
  file.copy(list.files(o, full.names = TRUE), oc, recursive = TRUE)
  unlink(o, recursive = TRUE)
  extended_knn_sharded(sh2, 5, 5, nn_kind = "exact", out_dir = o)
  expect_identical(read_graph_shards(o), g2)
  expect_identical(read_graph_shards(oc), g1)
  # moved
  expect_true(file.rename(oc, om))
  expect_identical(read_graph_shards(om), g1)
  expect_identical(read_graph_shards(om, which = 3), lapply(g1, function(m) m[101:150, ]))
  # a file of another run, of the same shape, is not read as this run's
  file.copy(file.path(o, "knn", "graph-00002.rds"), file.path(om, "knn"), overwrite = TRUE)
  expect_error(read_graph_shards(om),
               paste0("^graph file '.*graph-00002.rds' of 'x' was written by another run than ",
                      "the one recorded \\(of other data or settings\\)"))
  # ... nor one of the same data and settings: each run has its id
  o3 <- tempfile("graph-")
  on.exit(unlink(o3, recursive = TRUE), add = TRUE)
  extended_knn_sharded(sh2, 5, 5, nn_kind = "exact", out_dir = o3)
  file.copy(file.path(o3, "knn", "graph-00001.rds"), file.path(o, "knn"), overwrite = TRUE)
  expect_error(read_graph_shards(o), "graph-00001.rds' of 'x' was written by another run")
  # a relative out_dir, read after setwd()
  wd <- tempfile("wd-")
  dir.create(wd)
  on.exit(unlink(wd, recursive = TRUE), add = TRUE)
  old_wd <- setwd(wd)
  res <- tryCatch(extended_knn_sharded(sh1, 5, 5, nn_kind = "exact", out_dir = "rel-graph"),
                  finally = setwd(old_wd))
  expect_identical(res$dir, normalizePath(file.path(wd, "rel-graph")))
  expect_identical(read_graph_shards(res), g1)
  expect_identical(read_graph_shards(file.path(wd, "rel-graph")), g1)
  expect_output(print(res), paste0("in ", normalizePath(file.path(wd, "rel-graph"))),
                fixed = TRUE)
})

test_that("a graph file holding another shard's graph is named", {
  part <- list(idx = cbind(11:12, c(12L, 11L)), dist = cbind(c(0, 0), c(1, 1)))
  stamped <- lsnn:::stamp_graph(part, "0123456789abcdef", 1L)
  expect_null(lsnn:::graph_part_problem(stamped, 1L, 10, 2, 2, 20, "0123456789abcdef"))
  expect_identical(lsnn:::graph_part_problem(stamped, 2L, 10, 2, 2, 20, "0123456789abcdef"),
                   "holds the graph of shard 1, not of shard 2")
  expect_match(lsnn:::graph_part_problem(stamped, 1L, 10, 2, 2, 20, "fedcba9876543210"),
               "written by another run")
  stamped$dist[1, 2] <- 1.5
  expect_identical(lsnn:::graph_part_problem(stamped, 1L, 10, 2, 2, 20, "0123456789abcdef"),
                   "is damaged (its contents changed since it was written)")
  # an earlier version's file (no stamp) is checked for its shape alone
  expect_null(lsnn:::graph_part_problem(part, 1L, 10, 2, 2, 20, NULL))
})

test_that("a directory of an earlier version's run is read from where it is", {
  set.seed(23)
  X <- matrix(rnorm(160 * 3), 160)
  sh <- write_shards(X, tempfile("shards-"), rows_per_shard = 40)
  o <- tempfile("graph-")
  om <- tempfile("graph-moved-")
  on.exit(unlink(c(dirname(sh$files[1]), o, om), recursive = TRUE))
  res <- locally_scaled_knn_sharded(sh, 8, 5, nn_kind = "exact", out_dir = o)
  g <- read_graph_shards(res)
  # the record and files as the earlier version wrote them: absolute paths,
  # no ids, no fingerprints in the record
  old_form <- function(x) {
    x[c("dir", "run", "fingerprints")] <- NULL
    x
  }
  record <- old_form(res)
  record$knn <- old_form(res$knn)
  saveRDS(record, file.path(o, "complete.rds"))
  for (f in c(res$files, res$knn$files)) saveRDS(readRDS(f)[c("idx", "dist")], f)
  expect_true(file.rename(o, om))
  # (the record's paths are gone: the files in the directory are read)
  expect_false(file.exists(record$files[1]))
  expect_identical(read_graph_shards(om), g)
  expect_identical(read_graph_shards(as_graph <- lsnn:::as_graph_shards(om, "x")$knn),
                   extended_knn(X, 8, 5, nn_kind = "exact"))
  # its shards' fingerprints come from the run's record
  expect_identical(lsnn:::as_graph_shards(om, "x")$fingerprints, sh$fingerprints)
  # (n_neighbors = 7, the graph's: PaCMAP's rule would warn of a short graph)
  expect_identical(neighbor_embedding(sh, "pacmap", nn_method = om, n_neighbors = 7, seed = 2,
                                      phases = c(5, 5, 5)),
                   neighbor_embedding(X, "pacmap", nn_method = g, n_neighbors = 7, seed = 2,
                                      phases = c(5, 5, 5)))
  # shapes and contents are still checked
  bad <- readRDS(file.path(om, "lsnn", "lsnn-00002.rds"))
  bad$idx[, 1] <- 1L
  saveRDS(bad, file.path(om, "lsnn", "lsnn-00002.rds"))
  expect_error(read_graph_shards(om), "lsnn-00002.rds' of 'x' is damaged")
})

test_that("a resumed exact run checks the files it reuses and computes damaged ones again", {
  set.seed(24)
  X <- matrix(rnorm(400 * 4), 400)
  sh <- write_shards(X, tempfile("shards-"), rows_per_shard = 100)
  out <- tempfile("graph-")
  on.exit(unlink(c(dirname(sh$files[1]), out), recursive = TRUE))
  res <- locally_scaled_knn_sharded(sh, 10, 10, nn_kind = "exact", out_dir = out)
  lsnn_graph <- locally_scaled_knn(X, 10, 10, nn_kind = "exact")
  knn_graph <- extended_knn(X, 10, 10, nn_kind = "exact")
  expect_identical(read_graph_shards(res), lsnn_graph)
  # an unreadable extended graph file, an LSNN file whose contents changed
  # and a lost file of local scales
  writeBin(as.raw(1:9), res$knn$files[2])
  part <- readRDS(res$files[3])
  part$dist[5, 4] <- part$dist[5, 4] * (1 + 1e-12)
  saveRDS(part, res$files[3])
  unlink(file.path(out, "knn", "sigma-00004.rds"))
  messages <- character()
  again <- withCallingHandlers(
    locally_scaled_knn_sharded(sh, 10, 10, nn_kind = "exact", out_dir = out),
    message = function(m) {
      messages <<- c(messages, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
  expect_length(messages, 2)
  expect_match(messages[1], paste0("^graph file '.*knn/graph-00002.rds' of 'out_dir' cannot be ",
                                   "read .*\\(and 1 more files\\): computing them again"))
  expect_match(messages[2], paste0("^graph file '.*lsnn/lsnn-00003.rds' of 'out_dir' is damaged ",
                                   "\\(its contents changed since it was written\\): computing ",
                                   "it again"))
  expect_identical(read_graph_shards(again), lsnn_graph)
  expect_identical(read_graph_shards(again$knn), knn_graph)
  # only the damaged shards' work was done again
  redone <- again$tasks[-seq_len(nrow(res$tasks)), ]
  expect_setequal(redone$task[redone$phase == "merge"], c("merge shard 2", "merge shard 4"))
  expect_identical(redone$task[redone$phase == "locally scaled neighbours"], "lsnn shard 3")
  # a run whose files are whole is resumed without a word
  expect_silent(locally_scaled_knn_sharded(sh, 10, 10, nn_kind = "exact", out_dir = out))
})

test_that("a resumed approximate run over a damaged graph file searches again, as before", {
  set.seed(25)
  X <- clustered(800, 4)
  sh <- write_shards(X, tempfile("shards-"), rows_per_shard = 200)
  out <- tempfile("graph-")
  on.exit(unlink(c(dirname(sh$files[1]), out), recursive = TRUE))
  ctl <- shard_control(rows_per_partition = 300, recall_rows = 100)
  res <- extended_knn_sharded(sh, 8, 4, control = ctl, out_dir = out, seed = 6)
  g <- read_graph_shards(res)
  part <- readRDS(res$files[1])
  part$idx[3, 2:3] <- part$idx[3, 3:2]
  saveRDS(part, res$files[1])
  expect_error(read_graph_shards(out), "graph-00001.rds' of 'x' is damaged")
  expect_message(again <- extended_knn_sharded(sh, 8, 4, control = ctl, out_dir = out, seed = 6),
                 "graph-00001.rds' of 'out_dir' is damaged .*: computing it again")
  expect_identical(read_graph_shards(again), g)
  expect_identical(again$recall, res$recall)
})

test_that("an object whose run's directory moved, or a bare record, says what to give", {
  set.seed(26)
  X <- matrix(rnorm(90 * 3), 90)
  sh <- write_shards(X, tempfile("shards-"), rows_per_shard = 30)
  o <- tempfile("graph-")
  om <- tempfile("graph-moved-")
  on.exit(unlink(c(dirname(sh$files[1]), o, om), recursive = TRUE))
  res <- extended_knn_sharded(sh, 4, 2, nn_kind = "exact", out_dir = o)
  expect_true(file.rename(o, om))
  expect_error(read_graph_shards(res),
               "graph-00001.rds' of 'x' does not exist; .*give its new place as 'x'")
  expect_identical(read_graph_shards(om), extended_knn(X, 4, 2, nn_kind = "exact"))
  expect_error(read_graph_shards(readRDS(file.path(om, "complete.rds"))),
               "^'x' is a record of complete.rds, .*: give that directory as 'x'")
  record <- readRDS(file.path(om, "complete.rds"))
  record$files <- 7
  saveRDS(record, file.path(om, "complete.rds"))
  expect_error(read_graph_shards(om), "^'x' is damaged \\('files' must name at least one file\\)")
})

test_that("sharded PaCMAP warns once when its graph is shorter than PaCMAP's rule", {
  set.seed(22)
  X <- rbind(matrix(rnorm(120 * 4), 120), matrix(rnorm(120 * 4, mean = 3), 120))
  sh <- write_shards(X, tempfile("shards-"), rows_per_shard = 70)
  out <- tempfile("graph-")
  on.exit(unlink(c(dirname(sh$files[1]), out), recursive = TRUE))
  # 8 columns: 7 neighbours besides the row, where the rule asks for 10
  g <- locally_scaled_knn_sharded(sh, 8, 20, nn_kind = "exact", out_dir = out)
  warnings <- list()
  Y <- withCallingHandlers(
    neighbor_embedding(sh, "pacmap", nn_method = g, seed = 3, phases = c(5, 5, 5)),
    warning = function(w) {
      warnings[[length(warnings) + 1L]] <<- conditionMessage(w)
      invokeRestart("muffleWarning")
    })
  expect_length(warnings, 1)
  expect_match(warnings[[1]], paste0(
    "the sharded graph 'nn_method' has 7 neighbours per point besides the point itself, ",
    "fewer than the 10 near pairs of PaCMAP's rule at 240 points \\(see \\?neighbor_embedding\\): ",
    "the layout uses 7. For 10, make the graph with ",
    "locally_scaled_knn_sharded\\(shards, n_neighbors = 11\\); to use this one, give ",
    "n_neighbors = 7"))
  # the same layout as in memory; none with n_neighbors given, or a graph long enough
  expect_identical(Y, suppressWarnings(
    neighbor_embedding(X, "pacmap", nn_method = read_graph_shards(g), seed = 3,
                       phases = c(5, 5, 5))))
  expect_no_warning(neighbor_embedding(sh, "pacmap", nn_method = g, n_neighbors = 7, seed = 3,
                                       phases = c(5, 5, 5)))
  out11 <- tempfile("graph-")
  on.exit(unlink(out11, recursive = TRUE), add = TRUE)
  g11 <- locally_scaled_knn_sharded(sh, 11, 20, nn_kind = "exact", out_dir = out11)
  expect_no_warning(neighbor_embedding(sh, "localmap", nn_method = g11, seed = 3,
                                       phases = c(5, 5, 5)))
  # counts as numbers, for the in-memory path too
  expect_warning(lsnn:::pacmap_short_graph_warning(14L, 32L, 3e5, sharded = TRUE),
                 paste0("has 14 neighbours .* fewer than the 32 near pairs of PaCMAP's rule at ",
                        "300,000 points .* locally_scaled_knn_sharded\\(shards, n_neighbors = 33\\)"))
  expect_warning(lsnn:::pacmap_short_graph_warning(14L, 32L, 3e5, sharded = FALSE),
                 "^the graph 'nn_method' has 14 .* locally_scaled_knn\\(X, n_neighbors = 33\\)")
})

test_that("the help's count of the sharded LSNN's columns is what it returns", {
  set.seed(23)
  X <- matrix(rnorm(200 * 3), 200)
  sh <- write_shards(X, tempfile("shards-"), rows_per_shard = 80)
  on.exit(unlink(dirname(sh$files[1]), recursive = TRUE))
  # n_neighbors counts the row itself, as in locally_scaled_knn(); the
  # extended graph has n_neighbors + n_extra + 1 columns
  out <- tempfile("graph-")
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  g <- locally_scaled_knn_sharded(sh, 15, 10, nn_kind = "exact", out_dir = out)
  expect_identical(dim(read_graph_shards(g)$idx), c(200L, 15L))
  expect_identical(read_graph_shards(g)$idx[, 1], 1:200)
  expect_identical(dim(read_graph_shards(g$knn)$idx), c(200L, 26L))
  expect_identical(read_graph_shards(g), locally_scaled_knn(X, 15, 10, nn_kind = "exact"))
  # a sharded layout is no model
  expect_error(neighbor_embedding(sh, "pacmap", nn_method = g, ret_model = TRUE),
               "'ret_model' = TRUE is not available for sharded 'X'")
})
