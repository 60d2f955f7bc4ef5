# Shared set-up for the benchmark scripts: peers installed on demand, the
# Fashion-MNIST data (raw and its first 100 principal components, cached in
# bench/results/), timing and peak-memory functions.

ensure_packages <- function(pkgs) {
  missing <- pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)]
  if (length(missing) == 0) return(invisible())
  debs <- paste0("r-cran-", tolower(missing))
  if (file.exists("/etc/debian_version") && Sys.info()[["user"]] == "root") {
    system2("apt-get", c("install", "-y", "-qq", debs), stdout = FALSE)
  }
  still <- missing[!vapply(missing, requireNamespace, logical(1), quietly = TRUE)]
  if (length(still) > 0) install.packages(still, repos = "https://cloud.r-project.org")
}

results_dir <- function() {
  dir <- file.path("bench", "results")
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  dir
}

fashion_data <- function() {
  cache <- file.path(results_dir(), "fashion.rds")
  if (file.exists(cache)) return(readRDS(cache))
  fm <- lsnn::fashion_mnist()
  saveRDS(fm$X, cache, compress = FALSE)
  fm$X
}

fashion_pca100 <- function() {
  cache <- file.path(results_dir(), "fashion-pca100.rds")
  if (file.exists(cache)) return(readRDS(cache))
  ensure_packages("irlba")
  set.seed(1)
  X <- fashion_data()
  pca <- irlba::prcomp_irlba(X, n = 100, center = TRUE, scale. = FALSE)
  saveRDS(pca$x, cache, compress = FALSE)
  pca$x
}

elapsed <- function(expr) {
  gc(verbose = FALSE)
  t <- system.time(force(expr))[["elapsed"]]
  t
}

# Peak resident memory (MB) that `code` adds in a fresh R process after its
# `setup` has run: the kernel's high-water mark is reset between the two.
peak_memory_mb <- function(setup, code) {
  script <- tempfile(fileext = ".R")
  writeLines(c(
    setup,
    "invisible(gc(full = TRUE))",
    "rss <- function(field) as.numeric(sub('[^0-9]*([0-9]+).*', '\\\\1', grep(field, readLines('/proc/self/status'), value = TRUE))) / 1024",
    "writeLines('5', '/proc/self/clear_refs')",
    "base <- rss('^VmRSS')",
    code,
    "cat(base, rss('^VmHWM'), '\\n')"
  ), script)
  out <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE)
  v <- as.numeric(strsplit(trimws(out[length(out)]), " +")[[1]])
  c(before = v[1], peak = v[2], added = v[2] - v[1])
}

fmt <- function(x, digits = 2) formatC(x, digits = digits, format = "f")

# Generated clustered data of n rows and d columns: `n_clusters` Gaussian
# clusters of unequal size (weights 1/k, largest first) and unequal spread
# (standard deviations from 0.5 to 2 on a log scale) around centres drawn
# with standard deviation 8, plus a fraction `uniform` of rows spread
# uniformly over the box the centres span (padded by 3 of the largest
# spreads). Rows are made in chunks of 1e5 from their own seeds, so that
# generate_clusters(n, first = f, rows = r) gives rows f + 1 .. f + r of the
# whole set alone (for data written in shards). Returns the matrix with the
# cluster of each row (0 for uniform rows) as attribute "cluster".
generate_clusters <- function(n, d = 50, n_clusters = 30, uniform = 0, seed = 1,
                              first = 0, rows = n - first) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (!is.null(old)) assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  centres <- matrix(stats::rnorm(n_clusters * d, sd = 8), n_clusters)
  spread <- exp(seq(log(0.5), log(2), length.out = n_clusters))[sample.int(n_clusters)]
  weight <- 1 / seq_len(n_clusters)
  pad <- 3 * max(spread)
  lo <- apply(centres, 2, min) - pad
  hi <- apply(centres, 2, max) + pad
  chunk <- 1e5
  c0 <- floor(first / chunk)
  c1 <- ceiling((first + rows) / chunk) - 1
  X <- matrix(0, rows, d)
  label <- integer(rows)
  for (ch in c0:c1) {
    set.seed(seed * 100003 + ch)
    m <- min(chunk, n - ch * chunk)
    lab <- sample.int(n_clusters, m, replace = TRUE, prob = weight)
    lab[stats::runif(m) < uniform] <- 0L
    Z <- matrix(stats::rnorm(m * d), m) * c(0, spread)[lab + 1L] + rbind(0, centres)[lab + 1L, ]
    flat <- which(lab == 0L)
    if (length(flat) > 0) {
      Z[flat, ] <- matrix(stats::runif(length(flat) * d), length(flat)) *
        rep(hi - lo, each = length(flat)) + rep(lo, each = length(flat))
    }
    # the rows of this chunk that fall in [first, first + rows)
    g <- ch * chunk + seq_len(m)
    keep <- g > first & g <= first + rows
    X[g[keep] - first, ] <- Z[keep, , drop = FALSE]
    label[g[keep] - first] <- lab[keep]
  }
  attr(X, "cluster") <- label
  X
}

# Peak and current resident memory of this R process (GB).
process_memory_gb <- function() {
  status <- readLines("/proc/self/status")
  gb <- function(field) {
    as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(field, status, value = TRUE))) / 2^20
  }
  c(peak = gb("^VmHWM"), current = gb("^VmRSS"))
}

# What the t-SNE layout comparisons start from: lsnn's approximate 90-NN
# graph of X (the default t-SNE graph at perplexity 30) and 1e-4 times the
# first two principal components, scaled to a first column of sd 1e-4.
tsne_graph_and_start <- function(X, threads = 2L) {
  g <- lsnn::extended_knn(X, n_neighbors = 90, n_extra = 0, nn_kind = "approx",
                          n_threads = threads, seed = 1)
  pc <- prcomp(X, rank. = 2)$x
  list(graph = g, Y0 = 1e-4 * pc / sd(pc[, 1]))
}

# options(lsnn.grid) for FIt-SNE's grid (3 interpolation nodes per box, boxes
# 1 wide, at least 50 per dimension, no near field): the grid lsnn's t-SNE
# takes during the early exaggeration, here kept to the end.
fitsne_grid <- function() {
  list(nodes = 3, box_width = 1, min_boxes = 50, near_field = FALSE, points_per_box = 0,
       pair_weight = 0, smooth_width = 0, shallow_width = 0, fine_nodes = 0,
       fine_smooth_width = 0)
}

# The 10-NN label accuracy of points laid out at Y_query among reference
# points at Y_ref: the share of each query point's 10 nearest reference
# points (itself left out when `self`: Y_query is Y_ref) that carry its
# label, by exact searches (a measure must not depend on a search's recall;
# the partitioned one is fast in 2-D).
knn_label_accuracy <- function(Y_query, Y_ref, lab_query, lab_ref, self, n_threads = 2L) {
  idx <- if (self) {
    lsnn::extended_knn(Y_ref, 10, 0, nn_kind = "partition", n_threads = n_threads)$idx[, -1]
  } else {
    index <- lsnn::extended_knn(Y_ref, 10, 0, nn_kind = "partition", ret_index = TRUE,
                                n_threads = n_threads)$index
    lsnn::extended_knn_query(index, Y_query, n_neighbors = 10, nn_kind = "exact",
                             n_threads = n_threads)$idx
  }
  mean(matrix(lab_ref[idx], ncol = 10) == lab_query)
}

# The peer's one line of JSON: numbers by name, without a JSON package.
parse_peer_line <- function(line) {
  fields <- regmatches(line, gregexpr('"[a-z_]+": [0-9.eE+-]+', line))[[1]]
  keys <- sub('"([a-z_]+)".*', "\\1", fields)
  stats::setNames(as.list(as.numeric(sub('.*: ', "", fields))), keys)
}
