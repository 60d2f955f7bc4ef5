# Graphs of data in row shards (R/sharded_knn.R and R/shard_*.R), on 2 local workers.
#   Rscript bench/bench-shards.R format          shard file format: saveRDS against writeBin
#   Rscript bench/bench-shards.R exact [scale]   (a) 2e6 x 50 rows: exact sharded graph
#                                                against the in-memory one
#   Rscript bench/bench-shards.R approx [scale] [rows]
#                                                (b) 1e7 (or `rows`) x 50 rows, never in
#                                                memory: approximate LSNN graph, memory and
#                                                recall
#   Rscript bench/bench-shards.R simulate        (c) 1e8 and 1e9 rows on 16, 64 and 256
#                                                workers, from the task records of (b)
# `scale` (default 1) multiplies the rows and the shard and partition sizes:
# 0.01 checks the script in minutes. `rows` (default 1e7) sets the rows of (b)
# at scale 1, keeping the shard and partition sizes. Results go to
# bench/results/shards-*.
suppressMessages(library(lsnn))
source("bench/common.R")
args <- commandArgs(TRUE)
what <- if (length(args) >= 1) args[1] else "format"
scale <- if (length(args) >= 2) as.numeric(args[2]) else 1
d <- 50
work <- Sys.getenv("LSNN_BENCH_DIR", file.path(tempdir(), "lsnn-bench-shards"))
out_file <- function(name) file.path(results_dir(), sprintf("shards-%s-%g.%s", name, scale,
                                                             if (grepl("tasks", name)) "csv" else "txt"))
say <- function(file, ...) {
  line <- sprintf(...)
  cat(line, "\n")
  cat(line, "\n", file = file, append = TRUE)
}

# Generated clustered rows: 200 Gaussian clusters in 50 dimensions, each
# shard generated from its own seed, so any shard can be made alone.
gen_centres <- function() {
  set.seed(2024)
  matrix(rnorm(200 * d, sd = 3), 200)
}
gen_shard <- function(s, rows, centres) {
  set.seed(1e6 + s)
  centres[sample.int(nrow(centres), rows, replace = TRUE), ] + matrix(rnorm(rows * d), rows)
}
write_generated <- function(dir, n, rows_per_shard) {
  unlink(dir, recursive = TRUE)
  dir.create(dir, recursive = TRUE)
  centres <- gen_centres()
  n_shards <- ceiling(n / rows_per_shard)
  rows <- rep(rows_per_shard, n_shards)
  rows[n_shards] <- n - rows_per_shard * (n_shards - 1)
  files <- file.path(dir, sprintf("shard-%05d.rds", seq_len(n_shards)))
  for (s in seq_len(n_shards)) saveRDS(gen_shard(s, rows[s], centres), files[s], compress = FALSE)
  shard_set(files)
}
time_of <- function(expr) system.time(expr)[["elapsed"]]

if (what == "format") {
  # One shard of 1e5 x 50 doubles (40 MB): the median of 5 writes and reads.
  X <- matrix(rnorm(1e5 * d), 1e5)
  f1 <- tempfile(fileext = ".rds")
  f2 <- tempfile(fileext = ".bin")
  med <- function(e) {
    e <- substitute(e)
    env <- parent.frame()
    median(replicate(5, system.time(eval(e, env))[["elapsed"]]))
  }
  w_rds <- med(saveRDS(X, f1, compress = FALSE))
  r_rds <- med(Y1 <- readRDS(f1))
  w_bin <- med({con <- file(f2, "wb"); writeBin(as.vector(X), con); close(con)})
  r_bin <- med({con <- file(f2, "rb"); Y2 <- matrix(readBin(con, "double", 1e5 * d), 1e5); close(con)})
  stopifnot(identical(Y1, X), identical(Y2, X))
  file <- out_file("format")
  unlink(file)
  say(file, "saveRDS(compress = FALSE): write %.3f s, read %.3f s; writeBin: write %.3f s, read %.3f s (40 MB)",
      w_rds, r_rds, w_bin, r_bin)
}

if (what == "exact") {
  n <- round(2e6 * scale)
  rows_per_shard <- round(1e5 * scale)
  sh <- write_generated(file.path(work, "exact-data"), n, rows_per_shard)
  X <- do.call(rbind, lapply(sh$files, readRDS))
  t_mem <- time_of(g_mem <- extended_knn(X, 66, 0, nn_kind = "exact", n_threads = 2))
  rm(X)
  future::plan(future::multisession, workers = 2)
  out <- file.path(work, "exact-graph")
  unlink(out, recursive = TRUE)
  t_shard <- time_of(res <- extended_knn_sharded(sh, 66, 0, nn_kind = "exact", out_dir = out))
  future::plan(future::sequential)
  g <- read_graph_shards(res)
  write.csv(res$tasks, out_file("exact-tasks"), row.names = FALSE)
  file <- out_file("exact")
  unlink(file)
  say(file, "exact 67-NN of %s x %d rows in %d shards: in-memory (2 threads) %.1f s, sharded (2 workers) %.1f s, ratio %.2f; identical: %s",
      format(n, big.mark = ","), d, length(sh$files), t_mem, t_shard, t_shard / t_mem,
      identical(g, g_mem))
}

if (what == "approx") {
  n <- round((if (length(args) >= 3) as.numeric(args[3]) else 1e7) * scale)
  rows_per_shard <- round(1e5 * max(scale, 0.1))
  rows_per_partition <- round(2e5 * max(scale, 0.05))
  sh <- write_generated(file.path(work, "approx-data"), n, rows_per_shard)
  future::plan(future::multisession, workers = 2)
  out <- file.path(work, "approx-graph")
  unlink(out, recursive = TRUE)
  set.seed(1)
  ctl <- shard_control(rows_per_partition = rows_per_partition, recall_rows = 2000)
  t_shard <- time_of(res <- locally_scaled_knn_sharded(sh, 15, 52, nn_kind = "approx",
                                                       out_dir = out, control = ctl))
  future::plan(future::sequential)
  tasks <- res$tasks
  write.csv(cbind(tasks, n_rows = n), out_file("approx-tasks"), row.names = FALSE)
  peak <- tapply(tasks$peak_memory, tasks$pid, max)
  # the in-memory path to the same graph (the approximate LSNN of 15 from
  # 67 columns) at a tenth of the rows (1e6 at full scale), for the per-row
  # cost
  n_mem <- round(n / 10)
  centres <- gen_centres()
  X <- do.call(rbind, lapply(seq_len(ceiling(n_mem / rows_per_shard)), function(s) {
    gen_shard(s, rows_per_shard, centres)
  }))[seq_len(n_mem), ]
  set.seed(1)
  t_mem <- time_of(locally_scaled_knn(X, 15, 52, n_threads = 2, nn_kind = "approx"))
  file <- out_file("approx")
  unlink(file)
  say(file, "approximate LSNN (67 columns) of %s x %d rows in %d shards, %d partitions of about %s rows: %.1f s (2 workers), %.2f us per row",
      format(n, big.mark = ","), d, length(sh$files),
      length(grep("round 1: search partition", tasks$task)),
      format(rows_per_partition, big.mark = ","), t_shard, 1e6 * t_shard / n)
  say(file, "estimated recall on 2,000 sampled rows by round: %s", paste(format(res$recall, digits = 4), collapse = ", "))
  say(file, "peak memory per worker (VmHWM): %s GB", paste(format(peak / 2^30, digits = 3), collapse = ", "))
  say(file, "in-memory locally_scaled_knn approx of %s rows (2 threads): %.1f s, %.2f us per row; sharded/in-memory per-row cost %.2f",
      format(n_mem, big.mark = ","), t_mem, 1e6 * t_mem / n_mem, (t_shard / n) / (t_mem / n_mem))
}

if (what == "simulate") {
  # Model. A run at N rows has S = N / b shards of b rows and P = N / m
  # partitions of about m rows (b and m as measured: task counts grow in
  # proportion to N). Each phase is a set of equal, independent tasks, so on
  # W workers it takes ceiling(tasks / W) times the mean task time; phases
  # run one after the other, and as many rounds as measured. Task times do
  # not depend on N (fixed shard and partition sizes), except the scale
  # answers: G = min(S, max(N / 1e7, W)) tasks (R/shard_lsnn.R, scale_groups()),
  # each answering every shard's requests for its group's rows, so its time
  # is the measured time per byte answered times N / G rows' share of the
  # answers. Bytes moved per row are those measured (reads and writes of
  # every task). Memory per worker is the largest peak measured: no task
  # holds more than its shard or partition, or a group's scales and one
  # shard's requests. The central steps (k-means on a sample, listing the
  # files) are left out.
  src <- list.files(results_dir(), pattern = "^shards-approx-tasks-.*[.]csv$", full.names = TRUE)
  if (length(src) == 0) stop("run bench-shards.R approx first")
  src <- src[which.max(file.mtime(src))]
  tasks <- read.csv(src, stringsAsFactors = FALSE)
  n0 <- tasks$n_rows[1]
  kind <- sub("^round [0-9]+: ", "", tasks$phase)
  rounds <- length(unique(grep("^round", tasks$phase, value = TRUE))) / 3
  answers <- "locally scaled neighbours: scale answers"
  if (!any(kind == answers)) stop(basename(src), " has no scale answers: run bench-shards.R approx again")
  per_kind <- lapply(split(tasks, kind), function(t) {
    data.frame(tasks = nrow(t), seconds = mean(t$seconds), bytes = sum(t$bytes_read + t$bytes_written))
  })
  answered <- tasks[kind == answers, ]
  per_byte <- sum(answered$seconds) / sum(answered$bytes_written)
  answer_bytes_per_row <- sum(answered$bytes_written) / n0
  rows_per_shard <- n0 / sum(kind == "locally scaled neighbours")
  peak <- max(tasks$peak_memory, na.rm = TRUE)
  file <- out_file("simulation")
  unlink(file)
  say(file, "from %s (%s rows, %d rounds); scale answers: %.1f s per GB answered", basename(src),
      format(n0, big.mark = ","), rounds, per_byte * 1e9)
  for (N in c(1e8, 1e9)) {
    for (W in c(16, 64, 256)) {
      f <- N / n0
      time <- 0
      bytes <- 0
      for (k in names(per_kind)) {
        p <- per_kind[[k]]
        n_tasks <- p$tasks * f
        t_task <- p$seconds
        if (k == answers) {
          n_tasks <- min(N / rows_per_shard, max(ceiling(N / 1e7), W))
          t_task <- per_byte * answer_bytes_per_row * N / n_tasks
        }
        time <- time + ceiling(n_tasks / W) * t_task
        bytes <- bytes + p$bytes * f
      }
      say(file, "%g rows, %d workers: %.2f h, %.1f GB per worker, %.1f TB moved",
          N, W, time / 3600, peak / 2^30, bytes / 1e12)
    }
  }
}
