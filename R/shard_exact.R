# The exact graph of data in row shards, and what the sharded searches share:
# the exact query of a block of rows, the merging of candidate lists and the
# writing of a shard's graph. The exact neighbours of sampled rows, which
# estimate the approximate search's recall, are found here too.

# ---- the block kernel ----

# The k nearest rows of `reference` to each row of `query` by (exact
# distance, reference row number), leaving out row exclude[i] of the
# reference for query row i (NA: none), by the core's exact query
# (knn_query.h): the same distances and ties as the in-memory exact search.
# Returns list(idx, dist) of nrow(query) x min(k, available) with reference
# row numbers.
shard_block_knn <- function(query, reference, k, metric, exclude = NULL, n_threads = 1L) {
  nr <- nrow(reference)
  nq <- nrow(query)
  has_exclude <- !is.null(exclude) && any(!is.na(exclude))
  kk <- min(k, nr - has_exclude)
  if (kk < 1) return(list(idx = matrix(0L, nq, 0), dist = matrix(0, nq, 0)))
  # (the glue counts the stacked rows from 0, reference rows first)
  skip <- if (has_exclude) ifelse(is.na(exclude), -1L, as.integer(exclude) - 1L)
  .knn_query_dense(reference, query, kk, metric, TRUE, list(), c(0L, 0L), n_threads, FALSE,
                   simd_option(), skip)
}

# ---- merging candidate lists ----

# The best k_others candidates of each of n rows, by (distance, row number),
# each row number once and row self[i] left out, from blocks list(rows, idx,
# dist) (`rows`: the local rows of the block's lines; idx / dist: their
# candidates, 0 for none), by the core (graph_sort.h). Returns list(idx,
# dist, short): n x k_others matrices (0 / Inf where a row has fewer
# candidates) and the first row that has fewer (0 if none).
merge_candidates <- function(blocks, n, k_others, self = NULL, n_threads = 1L) {
  res <- .best_candidates(blocks, n, k_others, if (is.null(self)) integer() else self,
                          n_threads)
  res$short <- if (res$short > 0) which(res$idx[, k_others] == 0L)[1] else 0L
  res
}

# The best k_others of the lists `current` (NULL at first) and `new` (n x .
# matrices of global ids and distances) of each row.
merge_lists <- function(current, new, k_others, self, n_threads = 1L) {
  whole <- seq_len(nrow(new$idx))
  blocks <- list(list(rows = whole, idx = new$idx, dist = new$dist))
  if (!is.null(current)) {
    blocks[[2]] <- list(rows = whole, idx = current$idx, dist = current$dist)
  }
  merge_candidates(blocks, length(whole), k_others, self, n_threads)
}

# Graph shard s of run `id` (its rows are first + 1, first + 2, ...) from
# merged lists: the row itself first at distance 0, stamped (stamp_graph())
# and written to out[["graph"]]. With the LSNN's scale columns, the local
# scales of its rows are written first, to out[["sigma"]], so that a graph
# file that exists has them.
write_graph_shard <- function(lists, first, scale, out, id, s) {
  n <- nrow(lists$idx)
  g <- list(idx = cbind(as.integer(first + seq_len(n)), lists$idx),
            dist = cbind(0, lists$dist))
  dimnames(g$idx) <- dimnames(g$dist) <- NULL
  written <- 0
  if (!is.null(scale)) {
    sigma <- pmax(rowMeans(g$dist[, scale[1]:scale[2], drop = FALSE]), min_local_scale)
    written <- save_atomic(sigma, out[["sigma"]])
  }
  written + save_atomic(stamp_graph(g, id, s), out[["graph"]])
}

min_local_scale <- 1e-10

# ---- the exact graph ----

# First one task per shard, its own all-pairs search; then tasks that
# search a shard q against a group of the shards after it (at most
# rows_per_task rows), both halves with each pair of rows scored once (as
# the search in memory does): q's rows get one list over the whole group,
# each group shard's rows one list from q; a row takes only rows within its
# k-th distance in its own shard (no true neighbour is farther, and most
# candidates fall away before they cost anything). Then one merge per shard.
# Parts (run_layout's exact_part): q-q (own), q-g (q's list over the group
# that starts with shard g), r-q (shard r's list from shard q < r).
exact_phase <- function(run) {
  S <- length(run$shards$files)
  graphs <- shard_paths(run, "graph")
  offsets <- shard_offsets(run$shards)
  own <- lapply(seq_len(S), function(q) {
    shard_task(sprintf("exact shard %d", q),
               out = c(run_path(run, "exact_part", q, q), run_path(run, "bound", q)),
               input = list(shards = shard_subset(run$shards, q), first = offsets[q]),
               done_if = graphs[c(q, q)])
  })
  run_tasks(run, "exact neighbours within shards", own, exact_own_task)
  groups <- later_shard_groups(run$shards$rows, run$control$rows_per_task)
  between <- lapply(groups, function(g) {
    q <- g$q
    r <- g$r
    shard_task(if (length(r) == 1) sprintf("exact shard %d x shard %d", q, r) else
                 sprintf("exact shard %d x shards %d-%d", q, r[1], r[length(r)]),
               out = c(run_path(run, "exact_part", q, r[1]), run_path(run, "exact_part", r, q)),
               input = list(shards = shard_subset(run$shards, c(q, r)),
                            bounds = run_path(run, "bound", c(q, r)), first = offsets[c(q, r[1])]),
               done_if = graphs[c(q, r)])
  })
  run_tasks(run, "exact neighbours between shards", between, exact_group_task)
  merges <- lapply(seq_len(S), function(s) {
    starts <- vapply(Filter(function(g) g$q == s, groups), function(g) g$r[1], 0)
    shard_task(sprintf("merge shard %d", s), out = graph_out(run, s),
               input = list(parts = run_path(run, "exact_part", s, c(s, starts, seq_len(s - 1))),
                            shard = s, first = offsets[s], n = run$shards$rows[s]))
  })
  run_tasks(run, "merge", merges, merge_parts_task)
}

# The shards after each shard q in consecutive groups of at most `limit`
# rows (at least one shard each): list(q, r) per group.
later_shard_groups <- function(rows, limit) {
  S <- length(rows)
  groups <- list()
  for (q in seq_len(S - 1)) {
    start <- q + 1
    while (start <= S) {
      end <- start
      while (end < S && sum(as.double(rows[start:(end + 1)])) <= limit) end <- end + 1
      groups[[length(groups) + 1]] <- list(q = q, r = start:end)
      start <- end + 1
    }
  }
  groups
}

# A shard's own search (the all-pairs search of extended_knn()), its rows'
# lists without themselves, and each row's k-th distance within the shard
# (Inf where the shard has fewer rows), the bound of its search in the
# other shards.
exact_own_task <- function(input, out, run) {
  x <- read_shard(input$shards)
  k_others <- run$k - 1L
  k <- min(k_others, nrow(x) - 1L)
  others <- if (k > 0) {
    g <- exact_knn(list(kind = "dense", x = x, n = nrow(x), d = ncol(x)), k + 1L, run$metric,
                   run$n_threads, FALSE)
    list(idx = g$idx[, -1L, drop = FALSE] + as.integer(input$first),
         dist = g$dist[, -1L, drop = FALSE])
  } else {
    list(idx = matrix(0L, nrow(x), 0), dist = matrix(0, nrow(x), 0))
  }
  kth <- if (k == k_others) others$dist[, k] else rep(Inf, nrow(x))
  written <- save_atomic(others, out[1]) + save_atomic(kth, out[2])
  c(read = file.size(input$shards$files), written = written)
}

# Shard q (the first of input$shards) against the group of shards after it:
# q's part over the whole group, and one part per group shard.
exact_group_task <- function(input, out, run) {
  q <- read_shard(input$shards, 1L)
  group <- lapply(seq_along(input$shards$files)[-1], read_shard, shards = input$shards)
  rows <- vapply(group, nrow, 0L)
  r <- do.call(rbind, group)
  rm(group)
  # (a bound that is missing only costs time)
  bounds <- lapply(seq_along(input$bounds), function(b) {
    if (file.exists(input$bounds[b])) readRDS(input$bounds[b]) else
      rep(Inf, if (b == 1) nrow(q) else rows[b - 1])
  })
  read <- sum(file.size(c(input$shards$files, input$bounds)), na.rm = TRUE)
  k_others <- run$k - 1L
  both <- .knn_between_dense(q, r, min(k_others, nrow(r)), min(k_others, nrow(q)), run$metric,
                             run$n_threads, simd_option(), bounds[[1]],
                             unlist(bounds[-1], use.names = FALSE))
  # (row numbers of the stack of q's rows over the group's, whose shards
  # follow each other; 0 marks no candidate)
  shift <- function(idx, by) {
    idx[idx > 0L] <- as.integer(idx[idx > 0L] + by)
    idx
  }
  written <- save_atomic(list(idx = shift(both$a$idx, input$first[2] - nrow(q)),
                              dist = both$a$dist), out[1])
  both$b$idx <- shift(both$b$idx, input$first[1])
  end <- cumsum(rows)
  for (j in seq_along(rows)) {
    at <- (end[j] - rows[j]) + seq_len(rows[j])
    written <- written + save_atomic(list(idx = both$b$idx[at, , drop = FALSE],
                                          dist = both$b$dist[at, , drop = FALSE]),
                                     out[1 + j])
  }
  c(read = read, written = written)
}

# A shard's lists from its parts, read and merged a few at a time (the
# parts of a row are disjoint sets of rows).
merge_parts_task <- function(input, out, run) {
  n <- input$n
  self <- as.integer(input$first + seq_len(n))
  whole <- seq_len(n)
  lists <- NULL
  for (group in split(input$parts, ceiling(seq_along(input$parts) / 8))) {
    blocks <- lapply(group, function(f) c(list(rows = whole), readRDS(f)))
    if (!is.null(lists)) {
      blocks <- c(blocks, list(list(rows = whole, idx = lists$idx, dist = lists$dist)))
    }
    lists <- merge_candidates(blocks, n, run$k - 1L, self, run$n_threads)
  }
  if (lists$short > 0) {
    stop("row ", self[lists$short], " has fewer than ", run$k - 1L, " candidates",
         call. = FALSE)
  }
  written <- write_graph_shard(lists, input$first, run$lsnn$scale, out, run$id, input$shard)
  read <- sum(file.size(input$parts))
  unlink(input$parts)
  c(read = read, written = written)
}

# ---- exact neighbours of sampled rows ----

# The rows whose exact neighbours estimate the approximate search's recall
# (recall_rows of them, drawn from the run's seed), and those neighbours, by
# a task per shard: list(rows, idx, dist) with the rows' (k - 1) nearest
# other rows.
exact_rows_phase <- function(run) {
  n <- run$shards$n
  rows <- sample_rows(task_seed(run, "recall_rows"), n, min(n, run$control$recall_rows))
  query <- gather_rows(run$shards, rows)
  offsets <- shard_offsets(run$shards)
  S <- length(run$shards$files)
  parts <- run_path(run, "recall_part", seq_len(S))
  tasks <- lapply(seq_len(S), function(r) {
    local <- rows - offsets[r]
    shard_task(sprintf("recall rows x shard %d", r), out = parts[r],
               input = list(query = query, reference = shard_subset(run$shards, r),
                            first = offsets[r],
                            exclude = ifelse(local >= 1 & local <= run$shards$rows[r], local,
                                             NA_integer_)))
  })
  run_tasks(run, "exact neighbours of sampled rows", tasks, exact_rows_task)
  lists <- NULL
  for (r in seq_len(S)) lists <- merge_lists(lists, readRDS(parts[r]), run$k - 1L, rows)
  unlink(parts)
  list(rows = rows, idx = lists$idx, dist = lists$dist)
}

exact_rows_task <- function(input, out, run) {
  reference <- read_shard(input$reference)
  exclude <- as.integer(input$exclude)
  g <- shard_block_knn(input$query, reference, run$k - 1L, run$metric,
                       if (any(!is.na(exclude))) exclude, run$n_threads)
  g$idx[] <- as.integer(g$idx + input$first)
  c(read = file.size(input$reference$files), written = save_atomic(g, out))
}
