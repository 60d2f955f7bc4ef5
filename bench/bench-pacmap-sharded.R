# PaCMAP of 10,000,000 generated points (bench/common.R generate_clusters():
# 30 Gaussian clusters of unequal size and spread in 50 columns) from data in
# row shards: the sharded LSNN graph on 2 local workers, then
# the layout from the shard set and the sharded graph.
#
#   Rscript bench/bench-pacmap-sharded.R graph  [n]   write the shards, sharded LSNN graph
#   Rscript bench/bench-pacmap-sharded.R layout [n]   neighbor_embedding() from the shards
#
# n (default 1e7) rows, in shards of 1e5. The files go to LSNN_BENCH_DIR
# (default <tempdir>/lsnn-bench-pacmap); a graph run that stops resumes
# where it was. Each part prints its time and peak memory (VmHWM of the
# process; of each worker for the graph), the layout also its set-up
# apart and its 10-NN cluster accuracy, and appends them to
# bench/results/pacmap-sharded.txt.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))
args <- commandArgs(trailingOnly = TRUE)
what <- if (length(args) >= 1) args[1] else "graph"
n <- if (length(args) >= 2) as.numeric(args[2]) else 1e7
work <- Sys.getenv("LSNN_BENCH_DIR", file.path(tempdir(), "lsnn-bench-pacmap"))
data_dir <- file.path(work, sprintf("data-%g", n))
graph_dir <- file.path(work, sprintf("graph-%g", n))
rows_per_shard <- 1e5
n_near <- if (n <= 10000) 10L else as.integer(round(10 + 15 * (log10(n) - 4)))
log_file <- file.path(results_dir(), "pacmap-sharded.txt")
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n")
  cat(format(Sys.time(), "%Y-%m-%d %H:%M "), line, "\n", file = log_file, append = TRUE, sep = "")
}

shard_files <- function() {
  if (file.exists(file.path(data_dir, "shards.rds"))) return(shard_set(data_dir))
  unlink(data_dir, recursive = TRUE)
  dir.create(data_dir, recursive = TRUE)
  n_shards <- ceiling(n / rows_per_shard)
  files <- file.path(data_dir, sprintf("shard-%05d.rds", seq_len(n_shards)))
  for (s in seq_len(n_shards)) {
    first <- (s - 1) * rows_per_shard
    X <- generate_clusters(n, first = first, rows = min(rows_per_shard, n - first))
    attr(X, "cluster") <- NULL
    saveRDS(X, files[s], compress = FALSE)
  }
  shard_set(files)
}

if (what == "graph") {
  t_data <- elapsed(sh <- shard_files())
  say("%s x 50 rows in %d shards written in %.1f s", format(n, big.mark = ","),
      length(sh$files), t_data)
  future::plan(future::multisession, workers = 2)
  set.seed(1)
  # Each partition searched as neighbor_embedding() searches its own data
  # (shard_control(partition_search = "auto"): the partitioned exact search
  # on these clusters, else the approximate one with approx_control()'s
  # defaults, which at PaCMAP's 106 columns cost a quarter of the sharded
  # defaults' 150 candidates and 20 trees), and one round of partitions.
  # The recall estimate is reported.
  t_graph <- elapsed(g <- locally_scaled_knn_sharded(sh, n_neighbors = n_near + 1L, n_extra = 50,
                                                     nn_kind = "approx", out_dir = graph_dir,
                                                     nn_args = approx_control(),
                                                     control = shard_control(max_rounds = 1),
                                                     verbose = TRUE))
  future::plan(future::sequential)
  peak <- tapply(g$tasks$peak_memory, g$tasks$pid, max)
  say("sharded approximate LSNN graph (%d neighbours of %d) of %s rows: %.1f s on 2 workers; peak memory per worker %s GB; estimated recall %s",
      n_near + 1L, n_near + 51L, format(n, big.mark = ","), t_graph,
      paste(format(peak / 2^30, digits = 3), collapse = ", "),
      paste(format(g$recall, digits = 4), collapse = ", "))
}

if (what == "layout") {
  sh <- shard_set(data_dir)
  set.seed(42)
  # the set-up (data, graph, pairs, start) ends where the optimisation's
  # verbose message begins
  opt_start <- NA_real_
  note_start <- function(m) {
    if (grepl("optimizing", conditionMessage(m))) opt_start <<- as.numeric(Sys.time())
  }
  t_layout <- elapsed(Y <- withCallingHandlers(
    neighbor_embedding(sh, "pacmap", nn_method = graph_dir, n_threads = 2, verbose = TRUE),
    message = note_start))
  mem <- process_memory_gb()
  t_steps <- as.numeric(Sys.time()) - opt_start
  # (t_steps also holds the further pairs, their tiles and the return: the
  # optimiser's own clock, in the verbose output, times the steps alone)
  say("PaCMAP of %s points from the shards and the sharded graph: %.1f s (2 threads; set-up %.1f s, further pairs and 450 steps %.1f s), peak memory %.2f GB",
      format(n, big.mark = ","), t_layout, t_layout - t_steps, t_steps, mem[["peak"]])
  saveRDS(Y, file.path(work, sprintf("pacmap-%g.rds", n)), compress = FALSE)
  # 10-NN cluster accuracy in the layout over 20,000 sampled rows, as in
  # bench-big.R (the clusters regenerated shard by shard)
  cluster <- unlist(lapply(seq_along(sh$files), function(s) {
    first <- (s - 1) * rows_per_shard
    attr(generate_clusters(n, first = first, rows = min(rows_per_shard, n - first)), "cluster")
  }))
  set.seed(1)
  sample_rows <- sample(n, 20000)
  t_nn <- elapsed(nn <- extended_knn(Y, n_neighbors = 11, n_extra = 0, n_threads = 2))
  acc <- mean(matrix(cluster[nn$idx[sample_rows, -1]], ncol = 10) == cluster[sample_rows])
  say("10-NN cluster accuracy of the %s-point layout: %.4f (approximate 10-NN of the layout in %.1f s)",
      format(n, big.mark = ","), acc, t_nn)
}
