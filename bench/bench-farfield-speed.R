# Whether two installed builds of lsnn lay out t-SNE at the same speed and
# to the same numbers: the optimisation of neighbor_embedding(method =
# "tsne") from one kNN graph and one start, each build in its own R
# process, the builds alternating. Used to show that a change to the far
# field (inst/include/lsnn/farfield/) costs no time.
#
#   Rscript bench/bench-farfield-speed.R <library A> <library B> [data] [iterations] [runs]
#
# data: "fmnist" (the 70,000 Fashion-MNIST images / 255; default) or a
# number of generated points (generate_clusters(), 50 columns). The graph is
# lsnn's approximate 90-NN graph (the default t-SNE graph at perplexity 30),
# made once with library B and kept in LSNN_BENCH_DIR (default: a temporary
# directory); the start is 1e-4 times the first two principal components.
# iterations: default 750 (exaggeration for the first 250). runs: default 2
# per build. Prints each run's optimisation time, each build's median, their
# ratio and whether the layouts are identical.
args <- commandArgs(TRUE)
if (length(args) < 2) {
  stop("usage: Rscript bench/bench-farfield-speed.R <library A> <library B> ",
       "[data] [iterations] [runs]")
}
libs <- normalizePath(args[1:2])
data <- if (length(args) >= 3) args[3] else "fmnist"
iterations <- if (length(args) >= 4) as.integer(args[4]) else 750L
runs <- if (length(args) >= 5) as.integer(args[5]) else 2L
script_dir <- dirname(normalizePath(sub("^--file=", "",
                                        grep("^--file=", commandArgs(FALSE), value = TRUE))))
work <- Sys.getenv("LSNN_BENCH_DIR", file.path(tempdir(), "lsnn-bench-farfield"))
dir.create(work, showWarnings = FALSE, recursive = TRUE)
inputs <- file.path(work, paste0("tsne-inputs-", data, ".rds"))
rscript <- file.path(R.home("bin"), "Rscript")

run_in <- function(lib, code) {
  file <- tempfile(fileext = ".R")
  writeLines(code, file)
  out <- system2(rscript, file, stdout = TRUE, stderr = TRUE,
                 env = paste0("R_LIBS=", lib))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) stop(paste(out, collapse = "\n"))
  out
}

if (!file.exists(inputs)) {
  cat("graph and start of", data, "with", libs[2], "\n")
  run_in(libs[2], c(
    sprintf("source(%s)", deparse(file.path(script_dir, "common.R"))),
    "suppressPackageStartupMessages(library(lsnn))",
    sprintf("data <- %s", deparse(data)),
    "X <- if (data == 'fmnist') fashion_data() / 255 else generate_clusters(as.numeric(data))",
    sprintf("saveRDS(tsne_graph_and_start(X), %s, compress = FALSE)", deparse(inputs))
  ))
}

one_run <- function(lib, out) {
  res <- run_in(lib, c(
    "suppressPackageStartupMessages(library(lsnn))",
    sprintf("inp <- readRDS(%s)", deparse(inputs)),
    sprintf(paste0("r <- neighbor_embedding(nn_method = inp$graph, method = 'tsne', ",
                   "init = inp$Y0, max_iter = %d, n_threads = 2, ret_extra = TRUE)"), iterations),
    sprintf("saveRDS(r$embedding, %s)", deparse(out)),
    "cat('optimize', r$time[['optimize']], '\\n')"
  ))
  line <- grep("^optimize", res, value = TRUE)
  as.numeric(strsplit(line, " ")[[1]][2])
}

times <- matrix(NA_real_, runs, 2, dimnames = list(NULL, c("A", "B")))
layouts <- file.path(work, c("layout-A.rds", "layout-B.rds"))
for (r in seq_len(runs)) {
  for (b in 1:2) {
    times[r, b] <- one_run(libs[b], layouts[b])
    cat(sprintf("run %d, build %s (%s): %.1f s\n", r, colnames(times)[b], libs[b], times[r, b]))
  }
}
med <- apply(times, 2, median)
cat(sprintf("%s, %d iterations: A %.1f s, B %.1f s (medians of %d); B / A = %.3f; layouts %s\n",
            data, iterations, med[1], med[2], runs, med[2] / med[1],
            if (identical(readRDS(layouts[1]), readRDS(layouts[2]))) "identical" else "differ"))
