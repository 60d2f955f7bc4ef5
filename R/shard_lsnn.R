# The locally scaled neighbours of data in row shards, from the extended
# graph's files: the candidates' local scales exchanged between shards and
# groups of shards, then a task per shard that picks its rows' neighbours.

# The locally scaled neighbours need, for each shard's lists, the scales of
# their candidates, which the shards' merges wrote one file per shard. A
# task reading every scale file would make the bytes read grow as the
# shards times the rows; instead the scales are exchanged in three steps,
# so that the bytes grow as the lists' entries: each shard's task writes its
# candidates (in list order, grouped by the group of shards holding them:
# its requests), a task per group reads its shards' scales and answers
# every shard's requests, and each shard's task reads its answers and
# picks its neighbours. A group holds at most scale_group_rows rows (its
# scales are one task's memory), and there are at least as many groups as
# workers where the shards allow it.
scale_group_rows <- 1e7

lsnn_phase <- function(run) {
  out <- shard_paths(run, "lsnn")
  if (all(file.exists(out))) return(invisible())
  knn <- shard_paths(run, "graph")
  S <- length(knn)
  dir.create(dirname(run_path(run, "groups")), showWarnings = FALSE, recursive = TRUE)
  groups_file <- run_path(run, "groups")
  if (!file.exists(groups_file)) save_atomic(scale_groups(run), groups_file)
  group <- readRDS(groups_file)
  G <- max(group)
  offsets <- shard_offsets(run$shards)
  group_first <- offsets[match(seq_len(G), group)]
  # (a shard whose LSNN file exists needs neither requests nor answers)
  requests <- lapply(seq_len(S), function(s) {
    shard_task(sprintf("scale requests of shard %d", s),
               out = run_path(run, "request", s, seq_len(G)),
               input = list(graph = knn[s], group_first = group_first),
               done_if = rep(out[s], G))
  })
  run_tasks(run, "locally scaled neighbours: scale requests", requests, scale_request_task)
  todo <- which(!file.exists(out))
  answers <- lapply(seq_len(G), function(g) {
    mine <- which(group == g)
    shard_task(sprintf("scale answers of shard group %d", g),
               out = run_path(run, "answer", todo, g),
               input = list(sigma = shard_paths(run, "sigma", s = mine), first = offsets[mine[1]],
                            requests = run_path(run, "request", todo, g)))
  })
  run_tasks(run, "locally scaled neighbours: scale answers", answers, scale_answer_task)
  tasks <- lapply(seq_len(S), function(s) {
    shard_task(sprintf("lsnn shard %d", s), out = out[s],
               input = list(graph = knn[s], shard = s, group_first = group_first,
                            answers = run_path(run, "answer", s, seq_len(G)),
                            requests = run_path(run, "request", s, seq_len(G))))
  })
  run_tasks(run, "locally scaled neighbours", tasks, lsnn_task)
}

# The group of each shard: consecutive shards, as many groups as there are
# scale_group_rows in the rows (rounded up), or workers if more (but no more
# than shards), each about the same number of rows.
scale_groups <- function(run) {
  rows <- as.double(run$shards$rows)
  workers <- future::nbrOfWorkers()
  # (a scheduler's plan may report no limit)
  if (!is.finite(workers)) workers <- 1
  n_groups <- min(length(rows), max(ceiling(sum(rows) / scale_group_rows), workers))
  middle <- cumsum(rows) - rows / 2
  group <- pmin(n_groups, floor(middle / (sum(rows) / n_groups)) + 1)
  match(group, unique(group))
}

# A graph shard's candidates, other than the rows themselves, and the
# entries of each shard group among them (in list order): the order both
# its requests and its LSNN task use.
candidates_by_group <- function(g, group_first) {
  cand <- g$idx[, -1, drop = FALSE]
  # (group numbers are 1 to G: made a factor directly, not through
  # factor()'s strings)
  group <- structure(findInterval(cand, group_first + 0.5),
                     levels = as.character(seq_along(group_first)), class = "factor")
  list(cand = cand, at = split(seq_along(cand), group))
}

scale_request_task <- function(input, out, run) {
  g <- readRDS(input$graph)
  by <- candidates_by_group(g, input$group_first)
  written <- 0
  for (f in seq_along(out)) {
    written <- written + save_atomic(as.integer(by$cand[by$at[[f]]]), out[f])
  }
  c(read = file.size(input$graph), written = written)
}

scale_answer_task <- function(input, out, run) {
  sigma <- unlist(lapply(input$sigma, readRDS), use.names = FALSE)
  written <- 0
  for (r in seq_along(input$requests)) {
    written <- written + save_atomic(sigma[readRDS(input$requests[r]) - input$first], out[r])
  }
  c(read = sum(file.size(c(input$sigma, input$requests))), written = written)
}

# A shard's locally scaled neighbours, with its candidates' scales from the
# answers to its requests (in the order of candidates_by_group()).
lsnn_task <- function(input, out, run) {
  g <- readRDS(input$graph)
  by <- candidates_by_group(g, input$group_first)
  sigma <- numeric(length(by$cand))
  for (f in seq_along(input$answers)) sigma[by$at[[f]]] <- readRDS(input$answers[f])
  local <- list(idx = cbind(g$idx[, 1], matrix(seq_along(by$cand), nrow(by$cand))),
                dist = g$dist)
  res <- select_lsnn(local, sigma, run$lsnn$n_neighbors, run$lsnn$scale, run$n_threads)
  res$idx[, -1] <- by$cand[res$idx[, -1]]
  read <- sum(file.size(c(input$graph, input$answers)))
  written <- save_atomic(stamp_graph(res, run$id, input$shard), out)
  unlink(c(input$answers, input$requests))
  c(read = read, written = written)
}

# The locally scaled neighbours of a graph shard's rows by the core's
# selection (local_scaling.h, locally_scaled_query()), their candidates'
# scales looked up in the global vector sigma: the row itself, then the
# n_neighbors - 1 best of its other columns. The core recomputes each row's
# own scale from the same columns, as write_graph_shard() did.
select_lsnn <- function(g, sigma, n_neighbors, scale, n_threads) {
  self <- list(idx = g$idx[, 1, drop = FALSE], dist = g$dist[, 1, drop = FALSE])
  if (n_neighbors == 1L) return(self)
  chosen <- .locally_scaled_query(g$idx[, -1, drop = FALSE], g$dist[, -1, drop = FALSE], sigma,
                                  n_neighbors - 1L, scale[1], scale[2], n_threads)
  list(idx = cbind(self$idx, chosen$idx), dist = cbind(self$dist, chosen$dist))
}
