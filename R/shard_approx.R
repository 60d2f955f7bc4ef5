# The approximate graph of data in row shards: rounds of partitions around
# k-means centres, the approximate search of each partition as a task, the
# candidates merged per shard, and the recall estimated on sampled rows
# whose exact neighbours R/shard_exact.R finds. Every random step takes its
# seed from the run's (task_seed()).

# ---- rounds ----

approx_phase <- function(run) {
  ctl <- run$control
  n_parts <- max(1L, as.integer(ceiling(run$shards$n / partition_rows(ctl, run$shards$n))))
  recall_file <- run_path(run, "recall")
  recall <- if (file.exists(recall_file)) readRDS(recall_file)
  if (is.null(recall)) {
    recall <- list(truth = exact_rows_phase(run), by_round = numeric(), overlap = numeric())
    save_atomic(recall, recall_file)
  }
  round <- length(recall$by_round)
  while (round < ctl$max_rounds &&
         (round == 0 || recall$by_round[round] < ctl$target_recall)) {
    round <- round + 1L
    recall$overlap[round] <- approx_round(run, round, n_parts, recall$truth)
    recall$by_round[round] <- estimate_recall(run, round, recall$truth)
    save_atomic(recall, recall_file)
    if (run$verbose) {
      cli::cli_inform(c(i = sprintf("round %d: estimated recall %.4f", round,
                                    recall$by_round[round])))
    }
  }
  # The graph of the last round is the result (the scales moved first: a
  # graph file that exists has them).
  for (kind in c(if (!is.null(run$lsnn)) "sigma", "graph")) {
    from <- shard_paths(run, paste0("round_", kind), round)
    moving <- file.exists(from)
    file.rename(from[moving], shard_paths(run, kind)[moving])
  }
  invisible()
}

# One round: centres from a sample, each shard's rows put into the
# partition of their nearest centre (and those near a boundary into that of
# their second nearest), the approximate search on each partition, and the
# candidates merged per shard with the last round's lists. The assignment
# keeps the rows that may go to a second partition apart, with their
# excess (two_nearest()), so that the share searched twice can be chosen
# after it, from where the sampled rows and their true neighbours fell
# (choose_overlap()). Returns that share.
approx_round <- function(run, round, n_parts, truth) {
  overlap_file <- run_path(run, "overlap", round)
  if (all(file.exists(shard_paths(run, "round_graph", round)))) {
    return(readRDS(overlap_file)$share)
  }
  dir.create(run_path(run, "round", round), showWarnings = FALSE)
  centres_file <- run_path(run, "centres", round)
  if (!file.exists(centres_file)) {
    save_atomic(partition_centres(run, round, n_parts), centres_file)
  }
  partitions <- readRDS(centres_file)
  assigned <- assign_rows(run, round, partitions, truth)
  if (!file.exists(overlap_file)) {
    save_atomic(choose_overlap(partitions, assigned$watched, truth, run$control), overlap_file)
  }
  overlap <- readRDS(overlap_file)
  if (run$verbose) {
    cli::cli_inform(c(i = sprintf(
      "round %d: %d partitions, %.1f%% of rows also in a second one (%.4f of the sampled rows' neighbours share a partition with them)",
      round, nrow(partitions$centres), 100 * overlap$share, overlap$coverage)))
  }
  search_partitions(run, round, assigned, overlap$limit)
  merge_round(run, round, assigned, truth)
  overlap$share
}

# The share of the sampled rows' listed neighbours no farther than their
# true (k - 1)-th neighbour (the estimate of approx_control()), from the
# counts that the round's merges wrote (counted here from the graph shard
# where a merge wrote none).
estimate_recall <- function(run, round, truth) {
  files <- shard_paths(run, "found", round)
  graphs <- shard_paths(run, "round_graph", round)
  found <- vapply(seq_along(files), function(s) {
    if (file.exists(files[s])) return(readRDS(files[s]))
    t <- truth_of_shard(run, truth, s)
    if (length(t$rows) == 0) return(0)
    sum(readRDS(graphs[s])$dist[t$rows, -1, drop = FALSE] <= t$bound)
  }, 0)
  sum(found) / (length(truth$rows) * (run$k - 1))
}

# The sampled rows of shard s (local numbers) and their true (k - 1)-th
# distances, for its merge to count what its lists hold.
truth_of_shard <- function(run, truth, s) {
  offsets <- shard_offsets(run$shards)
  mine <- which(truth$rows > offsets[s] & truth$rows <= offsets[s + 1])
  list(rows = as.integer(truth$rows[mine] - offsets[s]), bound = truth$dist[mine, run$k - 1L])
}

# ---- partitions ----

# Partitions: k-means centres on a sample of rows (in the metric's geometry:
# unit rows for cosine, centred unit rows for correlation), starting from
# n_parts sampled rows. A centre whose partition would hold more than 1.5
# times rows_per_partition (estimated from the sample, with the share
# `overlap` of its rows searched twice, or none where the share is chosen
# later) is split in two (split_largest()), so that every task fits its
# share of memory and none runs far longer than the others; a centre that
# would get fewer than 4k rows is dropped, so that every partition has
# room for its rows' neighbours. Returns list(centres, shares, limits): the
# limits of keep_second() that put each share of the sample's rows (0 to
# 0.5 by 0.01, or the share `overlap` alone) in a second partition.
partition_centres <- function(run, round, n_parts) {
  n <- run$shards$n
  ctl <- run$control
  shares <- if (is.null(ctl$overlap)) seq(0, max_overlap, by = 0.01) else ctl$overlap
  if (n_parts == 1) {
    return(list(centres = matrix(0, 1, run$shards$n_col), shares = 0, limits = -Inf))
  }
  m <- ctl$sample_rows
  if (is.null(m)) m <- min(n, max(20000, 200 * n_parts))
  rows <- sample_rows(task_seed(run, "round_sample", round), n, min(n, m))
  x <- unique(partition_space(gather_rows(run$shards, rows), run$metric))
  n_parts <- min(n_parts, nrow(x))
  per_row <- n / nrow(x)
  planned <- if (is.null(ctl$overlap)) 0 else ctl$overlap
  sizes <- function(centres) {
    near <- two_nearest(x, centres, run$n_threads)
    near <- keep_second(near, overlap_limit(near$excess, planned))
    list(near = near, size = partition_sizes(near, nrow(centres)) * per_row)
  }
  start <- x[sample_rows(task_seed(run, "kmeans_start", round), nrow(x), n_parts), , drop = FALSE]
  centres <- value_or(
    suppressWarnings(stats::kmeans(x, start, iter.max = 20, algorithm = "MacQueen")$centers),
    start)
  centres <- split_largest(x, centres, sizes, 1.5 * partition_rows(ctl, n),
                           function(i) task_seed(run, "kmeans_split", round, i))
  repeat {
    size <- sizes(centres)$size
    small <- which(size < 4 * run$k)
    if (length(small) == 0 || nrow(centres) <= 2) break
    centres <- centres[-small[which.min(size[small])], , drop = FALSE]
  }
  centres <- unname(centres)
  excess <- two_nearest(x, centres, run$n_threads)$excess
  list(centres = centres, shares = shares,
       limits = vapply(shares, overlap_limit, 0, excess = excess))
}

# The centres with the largest partition split in two while it holds more
# than `limit` rows: 2-means on its sampled rows `x` (distinct rows),
# started from two of them drawn with the seed seed_of(i) for the i-th
# split. `sizes(centres)` gives each row's partitions (`near`) and the
# partitions' estimated sizes.
split_largest <- function(x, centres, sizes, limit, seed_of) {
  split <- 0L
  repeat {
    now <- sizes(centres)
    big <- which.max(now$size)
    mine <- x[now$near$first == big, , drop = FALSE]
    if (now$size[big] <= limit || nrow(mine) < 2) return(centres)
    split <- split + 1L
    start <- mine[sample_rows(seed_of(split), nrow(mine), 2L), , drop = FALSE]
    halves <- value_or(suppressWarnings(stats::kmeans(mine, start, iter.max = 20)$centers),
                       NULL)
    if (is.null(halves)) return(centres)
    centres <- rbind(centres[-big, , drop = FALSE], halves)
  }
}

# The largest share of rows that an automatic choice of the overlap puts in
# a second partition.
max_overlap <- 0.5

# The overlap of a round: with shard_control(overlap = NULL), the least of
# partitions$shares under which the sampled rows' neighbours that share a
# partition with them (a row is in partition p if p is its nearest centre,
# or its second nearest and its excess is within the limit) make up at least
# 1 - (1 - target_recall) / 4 of all (the boundaries then lose at most a
# quarter of the misses the target allows); the largest share where none
# does. `near` holds the partitions of the sampled rows and their true
# neighbours (data.frame(row, first, second, excess)), `truth` those rows
# and neighbours. Returns list(share, limit, coverage).
choose_overlap <- function(partitions, near, truth, control) {
  i <- match(rep(truth$rows, ncol(truth$idx)), near$row)
  j <- match(as.vector(truth$idx), near$row)
  keep <- !is.na(i) & !is.na(j)
  i <- i[keep]
  j <- j[keep]
  coverage <- function(limit) {
    if (length(i) == 0) return(1)
    two_i <- near$excess[i] <= limit
    two_j <- near$excess[j] <= limit
    fi <- near$first[i]
    fj <- near$first[j]
    si <- near$second[i]
    sj <- near$second[j]
    # (a second centre is NA only where there is one centre)
    mean((fi == fj | (two_i & si == fj) | (two_j & sj == fi) | (two_i & two_j & si == sj)) %in% TRUE)
  }
  covered <- vapply(partitions$limits, coverage, 0)
  good <- which(covered >= 1 - (1 - control$target_recall) / 4)
  at <- if (length(good) > 0) good[1] else length(covered)
  list(share = partitions$shares[at], limit = partitions$limits[at], coverage = covered[at])
}

partition_space <- function(x, metric) {
  if (metric == "correlation") x <- x - rowMeans(x)
  if (metric %in% c("cosine", "correlation")) {
    norm <- sqrt(rowSums(x^2))
    x <- x / ifelse(norm > 0, norm, 1)
  }
  x
}

# The partitions of each row from two_nearest(): list(first, second) of
# centre numbers, the nearest centre, and the second nearest where its
# excess is at most `limit` (NA elsewhere): rows near a boundary are
# searched on both sides of it.
keep_second <- function(near, limit) {
  near$second[near$excess > limit] <- NA_integer_
  near[c("first", "second")]
}

# The two nearest centres of each row and how much farther the second is
# (its distance over the first's, minus 1; Inf with one centre), by the
# core's exact query (ties to the lower centre number).
two_nearest <- function(x, centres, n_threads = 1L) {
  if (nrow(centres) == 1) {
    return(list(first = rep(1L, nrow(x)), second = rep(NA_integer_, nrow(x)),
                excess = rep(Inf, nrow(x))))
  }
  near <- shard_block_knn(x, centres, 2L, "euclidean", n_threads = n_threads)
  d_first <- near$dist[, 1]
  list(first = near$idx[, 1], second = near$idx[, 2],
       excess = ifelse(d_first > 0, near$dist[, 2] / d_first - 1, Inf))
}

# The limit of keep_second() that puts the share `overlap` of rows with
# these excesses (two_nearest()) in a second partition: those nearest a
# boundary.
overlap_limit <- function(excess, overlap) {
  if (overlap <= 0) return(-Inf)
  if (overlap >= 1) return(Inf)
  unname(stats::quantile(excess, overlap, type = 1))
}

# Rows per partition.
partition_sizes <- function(near, n_parts) {
  tabulate(near$first, n_parts) + tabulate(near$second[!is.na(near$second)], n_parts)
}

# ---- the tasks of a round ----

# Each shard's rows put into partitions by a task per shard not merged yet
# (assign_task()). Returns the rows per partition and shard of both kinds,
# P x S matrices `first` and `edge` (0 for shards merged before), and
# `watched`: the partitions of the sampled rows and their true neighbours,
# from which choose_overlap() chooses the overlap.
assign_rows <- function(run, round, partitions, truth) {
  S <- length(run$shards$files)
  P <- nrow(partitions$centres)
  offsets <- shard_offsets(run$shards)
  graphs <- shard_paths(run, "round_graph", round)
  watched <- sort(unique(c(truth$rows, truth$idx)))
  watched_shard <- findInterval(watched, offsets + 0.5)
  tasks <- lapply(seq_len(S), function(s) {
    shard_task(sprintf("round %d: assign shard %d", round, s),
               out = run_path(run, "assigned", round, s),
               input = list(shard = shard_subset(run$shards, s), first = offsets[s],
                            centres = partitions$centres, limit = max(partitions$limits),
                            watch = as.integer(watched[watched_shard == s] - offsets[s]),
                            bucket = run_path(run, "bucket", round, seq_len(P), s),
                            edge = run_path(run, "edge", round, seq_len(P), s)),
               done_if = graphs[s])
  })
  run_tasks(run, sprintf("round %d: partitions", round), tasks, assign_task)
  assigned <- lapply(run_path(run, "assigned", round, seq_len(S)), function(f) {
    if (file.exists(f)) readRDS(f)
  })
  counts <- function(what) {
    do.call(cbind, lapply(assigned, function(a) if (is.null(a)) integer(P) else a[[what]]))
  }
  list(first = counts("first"), edge = counts("edge"),
       watched = do.call(rbind, lapply(assigned, `[[`, "watched")))
}

# A shard's rows by partition: each in the bucket of its nearest centre,
# and those whose excess is within input$limit (the largest the round may
# use) also in the edge bucket of their second nearest, with their excess.
# Writes the rows per partition of both kinds and the partitions of the
# watched rows (global row numbers).
assign_task <- function(input, out, run) {
  x <- read_shard(input$shard)
  near <- two_nearest(partition_space(x, run$metric), input$centres, run$n_threads)
  levels <- seq_len(nrow(input$centres))
  written <- 0
  save_groups <- function(rows, group, files, extra = NULL) {
    members <- split(rows, factor(group, levels = levels))
    counts <- lengths(members, use.names = FALSE)
    for (p in which(counts > 0)) {
      r <- members[[p]]
      content <- list(ids = as.integer(input$first + r), x = x[r, , drop = FALSE])
      if (!is.null(extra)) content$excess <- extra[r]
      written <<- written + save_atomic(content, files[p])
    }
    counts
  }
  first <- save_groups(seq_len(nrow(x)), near$first, input$bucket)
  two <- which(near$excess <= input$limit)
  edge <- save_groups(two, near$second[two], input$edge, near$excess)
  w <- input$watch
  watched <- data.frame(row = input$first + w, first = near$first[w], second = near$second[w],
                        excess = near$excess[w])
  written <- written + save_atomic(list(first = first, edge = edge, watched = watched), out)
  c(read = file.size(input$shard$files), written = written)
}

# The approximate search of each partition as a task, the largest first (so
# that the last tasks to finish are short ones): its rows from the buckets,
# and from the edge buckets those within the round's `limit`. A task writes
# the candidates of each shard's rows, which that shard's merge consumes.
search_partitions <- function(run, round, assigned, limit) {
  graphs <- shard_paths(run, "round_graph", round)
  P <- nrow(assigned$first)
  tasks <- lapply(order(-rowSums(assigned$first)), function(p) {
    firsts <- which(assigned$first[p, ] > 0)
    edges <- which(assigned$edge[p, ] > 0)
    shards <- sort(union(firsts, edges))
    if (length(shards) == 0) return(NULL)
    shard_task(sprintf("round %d: search partition %d", round, p),
               out = run_path(run, "cand", round, p, shards),
               input = list(shards = shards, buckets = run_path(run, "bucket", round, p, firsts),
                            bucket_shards = firsts, edges = run_path(run, "edge", round, p, edges),
                            edge_shards = edges, limit = limit, search = run$control$partition_search,
                            seed = task_seed(run, "partition_search", round, p)),
               done_if = graphs[shards])
  })
  run_tasks(run, sprintf("round %d: search", round), Filter(Negate(is.null), tasks),
            partition_task)
}

# The search of one partition: its rows from each shard's bucket, and those
# of each shard's edge bucket whose excess is within input$limit, searched
# by the approximate search of extended_knn() with the task's seed; writes
# the candidates of each shard's rows (none where it has no rows left).
partition_task <- function(input, out, run) {
  part_of <- function(s) {
    b <- match(s, input$bucket_shards)
    e <- match(s, input$edge_shards)
    mine <- if (!is.na(b)) readRDS(input$buckets[b]) else list(ids = integer(), x = NULL)
    if (!is.na(e)) {
      edge <- readRDS(input$edges[e])
      keep <- edge$excess <= input$limit
      mine <- list(ids = c(mine$ids, edge$ids[keep]),
                   x = rbind(mine$x, edge$x[keep, , drop = FALSE]))
    }
    mine
  }
  parts <- lapply(input$shards, part_of)
  counts <- vapply(parts, function(b) length(b$ids), 0L)
  ids <- unlist(lapply(parts, `[[`, "ids"))
  x <- do.call(rbind, lapply(parts, `[[`, "x"))
  rm(parts)
  if (length(ids) > 1) {
    g <- search_partition(run, prepare_data(x, run$metric), min(run$k, length(ids)), input$search,
                          input$seed)
    g$idx[] <- ids[g$idx]
  } else {
    g <- list(idx = matrix(ids, length(ids), 1), dist = matrix(0, length(ids), 1))
  }
  rm(x)
  # the candidates of each shard's rows (the row itself dropped), one file
  # per shard
  written <- 0
  end <- cumsum(counts)
  for (b in seq_along(input$shards)) {
    rows <- (end[b] - counts[b]) + seq_len(counts[b])
    written <- written + save_atomic(list(ids = ids[rows],
                                          idx = g$idx[rows, -1, drop = FALSE],
                                          dist = g$dist[rows, -1, drop = FALSE]),
                                     out[b])
  }
  read <- sum(file.size(c(input$buckets, input$edges)))
  unlink(c(input$buckets, input$edges))
  c(read = read, written = written)
}

# The lists of one partition's rows among themselves, by the search that
# shard_control(partition_search = ) names ("auto": search_kind()'s rule,
# the one of the in-memory embeddings: the exact search up to 20,000 rows,
# above it the partitioned exact search where it is forecast to win, else
# the approximate one).
search_partition <- function(run, data, k, how, seed) {
  if (how == "auto") how <- search_kind(data$n, data, k, run$metric, run$n_threads)
  if (how == "exact") {
    exact_knn(data, k, run$metric, run$n_threads, FALSE)
  } else if (how == "partition") {
    partition_knn(data, k, run$metric, run$n_threads, FALSE, partition_control(), seed)
  } else {
    approx_knn(data, k, run$metric, run$n_threads, FALSE, run$nn_args, seed = seed, warn = FALSE)
  }
}

# A merge per shard of the candidates of its rows from this round's
# partitions and its last round's lists; the last round's graphs go once
# all are merged.
merge_round <- function(run, round, assigned, truth) {
  S <- ncol(assigned$first)
  offsets <- shard_offsets(run$shards)
  previous <- if (round > 1) shard_paths(run, "round_graph", round - 1L)
  tasks <- lapply(seq_len(S), function(s) {
    from <- which(assigned$first[, s] > 0 | assigned$edge[, s] > 0)
    shard_task(sprintf("round %d: merge shard %d", round, s),
               out = c(graph_out(run, s, round), found = shard_paths(run, "found", round, s = s)),
               input = list(parts = run_path(run, "cand", round, from, s), previous = previous[s],
                            shard = s, first = offsets[s], n = run$shards$rows[s],
                            truth = truth_of_shard(run, truth, s)))
  })
  run_tasks(run, sprintf("round %d: merge", round), tasks, merge_candidates_task)
  if (round > 1) unlink(c(previous, shard_paths(run, "round_sigma", round - 1L)))
}

# A shard's lists: every candidate of its rows, from the previous round and
# from each partition, ranked once; with the number of the sampled rows'
# listed neighbours within their true (k - 1)-th distance (written first: a
# graph file that exists has it).
merge_candidates_task <- function(input, out, run) {
  n <- input$n
  self <- as.integer(input$first + seq_len(n))
  k_others <- run$k - 1L
  blocks <- list()
  read <- 0
  if (!is.null(input$previous)) {
    g <- readRDS(input$previous)
    blocks[[1]] <- list(rows = seq_len(n), idx = g$idx[, -1, drop = FALSE],
                        dist = g$dist[, -1, drop = FALSE])
    read <- read + file.size(input$previous)
  }
  for (f in input$parts) {
    cand <- readRDS(f)
    read <- read + file.size(f)
    blocks[[length(blocks) + 1L]] <- list(rows = as.integer(cand$ids - input$first),
                                          idx = cand$idx, dist = cand$dist)
  }
  lists <- merge_candidates(blocks, n, k_others, self, run$n_threads)
  rm(blocks)
  if (lists$short > 0) {
    stop("row ", self[lists$short], " has fewer than ", k_others,
         " candidates: its partitions are too small", call. = FALSE)
  }
  t <- input$truth
  found <- sum(lists$dist[t$rows, , drop = FALSE] <= t$bound)
  written <- save_atomic(found, out[["found"]]) +
    write_graph_shard(lists, input$first, run$lsnn$scale, out, run$id, input$shard)
  unlink(input$parts)
  c(read = read, written = written)
}
