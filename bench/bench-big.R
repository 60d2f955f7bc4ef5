# Neighbour embedding of generated clustered data at scale (bench/common.R
# generate_clusters(): 30 Gaussian clusters of unequal size and spread in 50
# columns, optionally with a share of rows spread uniformly over the whole
# box), from the data to the layout: the graph (of the search the defaults
# pick), the affinities (or PaCMAP's pairs), the PCA start and the
# optimisation, all defaults.
#
#   Rscript bench/bench-big.R [n] [uniform] [method]
#
# n (default 1e6) rows, `uniform` (default 0) the share of uniform rows,
# method one of neighbor_embedding()'s ("pacmap" by default). Run each size
# in its own process: the peak resident memory printed is the process's
# (VmHWM), the data included; a sampler reads the resident size every half
# second, so that each stage's peak is reported too, and every epoch of the
# optimisation the resident size and the far field's buffers
# (bench/results/big-trace.csv). Environment:
# LSNN_BENCH_THREADS (2); LSNN_BENCH_DIR, when set, receives the layout
# (big-<method>-<n>-<uniform>.rds); LSNN_BENCH_GRID=fitsne keeps FIt-SNE's
# grid after t-SNE's exaggeration (fitsne_grid() in bench/common.R). Appends a
# row to bench/results/big.csv.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
uniform <- if (length(args) >= 2) as.numeric(args[2]) else 0
method <- if (length(args) >= 3) args[3] else "pacmap"
threads <- as.integer(Sys.getenv("LSNN_BENCH_THREADS", "2"))
grid <- Sys.getenv("LSNN_BENCH_GRID", "default")
if (!grid %in% c("default", "fitsne")) stop("LSNN_BENCH_GRID must be default or fitsne")
if (grid == "fitsne") options(lsnn.grid = fitsne_grid())

X <- generate_clusters(n, uniform = uniform)
cluster <- attr(X, "cluster")
attr(X, "cluster") <- NULL
mem_data <- process_memory_gb()

# resident size (kB) with the time, every half second, until this process ends
rss_log <- tempfile(fileext = ".txt")
# (system() runs it in the background itself)
system(sprintf("(while kill -0 %d 2>/dev/null; do echo $(date +%%s.%%N) $(awk %s /proc/%d/status); sleep 0.5; done) > %s 2>/dev/null",
               Sys.getpid(), shQuote("/^VmRSS/ {print $2}"), Sys.getpid(), rss_log), wait = FALSE)
# every epoch of the optimisation: the resident size, what the core's
# large buffers (the far field's grids, spectra and scratch) hold now and
# held at most since the last epoch, and the C heap: allocated from its
# arenas, freed there but kept, and mapped block by block (R's large
# vectors among them)
trace <- list()
trace_memory <- function(iteration, Y) {
  buffers <- lsnn:::.large_buffer_mb(TRUE)
  heap <- lsnn:::.heap_mb()
  trace[[length(trace) + 1]] <<- data.frame(
    iteration = iteration, seconds = as.numeric(Sys.time()) - start,
    rss_gb = process_memory_gb()[["current"]], buffers_mb = buffers[["now"]],
    buffers_peak_mb = buffers[["peak"]], heap_in_use_mb = heap[["in_use"]],
    heap_free_mb = heap[["free"]], heap_mapped_mb = heap[["mapped"]])
  TRUE
}
# The layout as a user gets it. For the methods with affinities P the
# stages' times come from the verbose messages: ret_extra = TRUE would
# return P, and a P that is returned is read where it is rather than
# rewritten in the layout's order. PaCMAP's pairs are not kept in any case.
pacmap_like <- method %in% c("pacmap", "localmap")
stage_start <- c(init = NA, optimize = NA)
note_stage <- function(m) {
  text <- conditionMessage(m)
  if (grepl("^neighbor_embedding: .* initialisation", text)) stage_start[["init"]] <<- as.numeric(Sys.time())
  if (grepl("^neighbor_embedding: optimizing", text)) stage_start[["optimize"]] <<- as.numeric(Sys.time())
}
set.seed(42)
start <- as.numeric(Sys.time())
secs <- elapsed(res <- withCallingHandlers(
  neighbor_embedding(X, method, n_threads = threads, verbose = TRUE, ret_extra = pacmap_like,
                     callback = trace_memory),
  message = note_stage))
if (!pacmap_like) {
  # (iterations: the last epoch the callback saw, the end of a run to max_iter)
  res <- list(embedding = res, iterations = utils::tail(trace, 1)[[1]]$iteration,
              time = c(affinities = stage_start[["init"]] - start,
                       init = stage_start[["optimize"]] - stage_start[["init"]],
                       optimize = start + secs - stage_start[["optimize"]]))
}
mem <- process_memory_gb()
trace <- do.call(rbind, trace)
print(trace, row.names = FALSE, digits = 4)
trace_file <- file.path(results_dir(), "big-trace.csv")
trace <- cbind(date = format(Sys.time(), "%Y-%m-%d %H:%M"), method = method, n = n,
               uniform = uniform, trace)
if (file.exists(trace_file)) {
  # (rows of older runs lack the newer columns: NA there)
  old <- utils::read.csv(trace_file, check.names = FALSE)
  for (col in setdiff(names(trace), names(old))) old[[col]] <- NA
  trace <- rbind(old[names(trace)], trace)
}
utils::write.table(trace, trace_file, sep = ",", row.names = FALSE)
Y <- res$embedding
iters <- res$iterations
# the layout, for far_field_plan() and the quality measures afterwards
work <- Sys.getenv("LSNN_BENCH_DIR")
if (nzchar(work)) {
  saveRDS(Y, file.path(work, sprintf("big-%s-%g-%g.rds", method, n, uniform)), compress = FALSE)
}
# the grids of the last layout (t-SNE layouts of more than 200,000 points
# keep the exaggeration's grid to the end)
if (method %in% c("tsne", "largevis", "umap", "tumap") && ncol(Y) <= 2) {
  print(far_field_plan(Y, method, exaggerated = method == "tsne" && n > 2e5,
                       n_threads = threads))
}

# each stage's peak resident size: the samples within its time span (the
# stages run one after the other from the call's start)
samples <- utils::read.table(rss_log, col.names = c("time", "kb"), fill = TRUE)
samples <- samples[stats::complete.cases(samples), ]
stages <- c("affinities", "init", "optimize")
ends <- start + cumsum(res$time[stages])
stage_peak <- vapply(seq_along(stages), function(s) {
  from <- if (s == 1) start else ends[[s - 1]]
  kb <- samples$kb[samples$time >= from & samples$time <= ends[[s]]]
  if (length(kb) == 0) NA_real_ else max(kb) / 2^20
}, numeric(1))
names(stage_peak) <- stages

# 10-NN cluster accuracy in the layout over 20,000 sampled points (the
# uniform rows have no cluster and are left out of the sample)
set.seed(1)
sample_rows <- sample(which(cluster > 0), min(20000, sum(cluster > 0)))
# (the exact search of all points is quadratic: approximate beyond 2e5)
nn <- extended_knn(Y, n_neighbors = 11, n_extra = 0, n_threads = threads,
                   nn_kind = if (n > 2e5) "approx" else "exact")
acc <- mean(matrix(cluster[nn$idx[sample_rows, -1]], ncol = 10) == cluster[sample_rows])

row <- data.frame(date = format(Sys.time(), "%Y-%m-%d %H:%M"), method = method, n = n,
                  uniform = uniform, threads = threads, seconds = secs,
                  graph_and_affinities = res$time[["affinities"]], init = res$time[["init"]],
                  optimize = res$time[["optimize"]], iterations = iters,
                  ms_per_iteration = 1000 * res$time[["optimize"]] / iters,
                  us_per_iteration_per_point = 1e6 * res$time[["optimize"]] / iters / n,
                  peak_gb = mem[["peak"]], data_gb = mem_data[["current"]],
                  peak_affinities_gb = stage_peak[["affinities"]],
                  peak_init_gb = stage_peak[["init"]], peak_optimize_gb = stage_peak[["optimize"]],
                  knn10_cluster = acc)
print(row, row.names = FALSE)
file <- file.path(results_dir(), "big.csv")
utils::write.table(row, file, sep = ",", row.names = FALSE, append = file.exists(file),
                   col.names = !file.exists(file))
