# PaCMAP and LocalMAP against the official implementation, run from its
# source (PACMAP_SRC: a checkout of https://github.com/YingfanWang/PaCMAP)
# with Debian's python3-numba, python3-sklearn and python3-faiss, 2 numba
# threads, its functions compiled before the clock starts.
#
#   PACMAP_SRC=/path/to/PaCMAP Rscript bench/bench-pacmap.R [fit] [transform] [seeds] [graphs] [clusters]
#
# fit: all 70,000 Fashion-MNIST images / 255 in 2-D, both methods: seconds,
# 10-NN label accuracy, random-triplet accuracy and 15-NN preservation.
# transform: a model of the 60,000 training images places the 10,000 test
# images; the 10-NN label accuracy of each test image among the training
# points. seeds: fit's measures for 5 runs of each (lsnn with seeds 1 to 5,
# the official at its default random_state = None, so a new one each run),
# their means and sd, and Welch's t-test of the 10-NN label accuracies.
# graphs: lsnn's 10-NN label accuracy on its own, the exact and the
# official search's near-pair graphs (see below). clusters: PaCMAP on 2e5
# generated rows (generate_clusters(): 30 clusters in 50 columns, rows in
# random order), both timed in the same run, with the 10-NN cluster purity
# of the layouts. Results go to bench/results/pacmap-*.csv.
source("bench/common.R")
library(lsnn)

what <- commandArgs(trailingOnly = TRUE)
if (length(what) == 0) what <- c("fit", "transform")
src <- Sys.getenv("PACMAP_SRC")
if (!file.exists(file.path(src, "source", "pacmap", "pacmap.py"))) {
  stop("set PACMAP_SRC to a checkout of the official PaCMAP source", call. = FALSE)
}
debs <- c("python3-numba", "python3-sklearn", "python3-faiss")
if (system2("/usr/bin/python3", c("-c", shQuote("import numba, sklearn, faiss")),
            stdout = FALSE, stderr = FALSE) != 0) {
  system2("apt-get", c("install", "-y", "-qq", debs), stdout = FALSE)
}

fm <- fashion_mnist()
X <- fm$X / 255
label <- as.integer(fm$label)
n_threads <- 2L

write_f32 <- function(M, file) writeBin(as.vector(t(M)), file, size = 4)
read_f32 <- function(file, n) matrix(readBin(file, "numeric", 2 * n, size = 4), n, 2, byrow = TRUE)

# The official implementation on the rows of `train` of `data` (and `test`,
# placed by its transform()).
peer <- function(method, train, test = NULL, data = X) {
  dir <- tempfile("pacmap-peer")
  dir.create(dir)
  f <- function(name) file.path(dir, name)
  write_f32(data[train, ], f("x.f32"))
  args <- c("bench/pacmap-peer.py", method, f("x.f32"), length(train), ncol(data), f("y.f32"))
  if (!is.null(test)) {
    write_f32(data[test, ], f("new.f32"))
    args <- c(args, f("new.f32"), length(test), f("ynew.f32"))
  }
  out <- system2("/usr/bin/python3", args, stdout = TRUE,
                 env = c(paste0("PACMAP_SRC=", src), paste0("NUMBA_NUM_THREADS=", n_threads)))
  res <- parse_peer_line(out[length(out)])
  res$Y <- read_f32(f("y.f32"), length(train))
  if (!is.null(test)) res$Y_new <- read_f32(f("ynew.f32"), length(test))
  unlink(dir, recursive = TRUE)
  res
}


label_accuracy <- function(Y_query, Y_ref, lab_query, lab_ref, self) {
  knn_label_accuracy(Y_query, Y_ref, lab_query, lab_ref, self, n_threads)
}

quality <- function(Y) {
  q <- embedding_quality(X, Y, k = 15, n_threads = n_threads)
  c(knn10_label = label_accuracy(Y, Y, label, label, TRUE),
    triplets = q$random_triplet_accuracy, nn15 = q$neighbor_preservation)
}

if ("fit" %in% what) {
  rows <- list()
  for (method in c("pacmap", "localmap")) {
    p <- peer(method, seq_len(nrow(X)))
    set.seed(1)
    t <- elapsed(Y <- neighbor_embedding(X, method, n_threads = n_threads))
    rows[[length(rows) + 1]] <- data.frame(method = method, who = c("official", "lsnn"),
                                           seconds = c(p$fit_seconds, t),
                                           rbind(quality(p$Y), quality(Y)))
    print(rows[[length(rows)]])
  }
  res <- do.call(rbind, rows)
  write.csv(res, file.path(results_dir(), "pacmap-fit.csv"), row.names = FALSE)
  print(res)
}

if ("transform" %in% what) {
  train <- 1:60000
  test <- 60001:70000
  rows <- list()
  for (method in c("pacmap", "localmap")) {
    p <- peer(method, train, test)
    set.seed(1)
    t_fit <- elapsed(fit <- neighbor_embedding(X[train, ], method, n_threads = n_threads,
                                               ret_model = TRUE))
    t_new <- elapsed(Y_new <- neighbor_embedding_transform(X[test, ], fit$model,
                                                           n_threads = n_threads))
    acc <- c(label_accuracy(p$Y_new, p$Y, label[test], label[train], FALSE),
             label_accuracy(Y_new, fit$embedding, label[test], label[train], FALSE))
    rows[[length(rows) + 1]] <- data.frame(
      method = method, who = c("official", "lsnn"), fit_seconds = c(p$fit_seconds, t_fit),
      transform_seconds = c(p$transform_seconds, t_new), knn10_label_new = acc)
    print(rows[[length(rows)]])
  }
  res <- do.call(rbind, rows)
  write.csv(res, file.path(results_dir(), "pacmap-transform.csv"), row.names = FALSE)
  print(res)
}

if ("seeds" %in% what) {
  rows <- list()
  for (method in c("pacmap", "localmap")) {
    for (seed in 1:5) {
      p <- peer(method, seq_len(nrow(X)))
      t <- elapsed(Y <- neighbor_embedding(X, method, n_threads = n_threads, seed = seed))
      rows[[length(rows) + 1]] <- data.frame(method = method, who = c("official", "lsnn"),
                                             seed = seed, seconds = c(p$fit_seconds, t),
                                             rbind(quality(p$Y), quality(Y)))
      print(rows[[length(rows)]])
    }
  }
  res <- do.call(rbind, rows)
  write.csv(res, file.path(results_dir(), "pacmap-seeds.csv"), row.names = FALSE)
  for (method in unique(res$method)) {
    one <- res[res$method == method, ]
    acc <- split(one$knn10_label, one$who)
    cat(sprintf("%s: 10-NN label accuracy, official %.4f (sd %.4f), lsnn %.4f (sd %.4f), difference %.4f, Welch p = %.3g\n",
                method, mean(acc$official), sd(acc$official), mean(acc$lsnn), sd(acc$lsnn),
                mean(acc$lsnn) - mean(acc$official), stats::t.test(acc$lsnn, acc$official)$p.value))
    print(aggregate(cbind(seconds, knn10_label, triplets, nn15) ~ who, one, mean))
  }
}

# graphs: lsnn's layouts (seeds 1 to 4) on three near-pair graphs of the
# same 100 principal components: its own (the default call), the exact
# LSNN, and the LSNN of the official implementation's search (FAISS HNSW,
# 32 links, its default search depth; its first column dropped, as the
# official does). No official run: this asks whether the graph explains
# the gap in 10-NN label accuracy measured by `seeds`.
if ("graphs" %in% what) {
  n <- nrow(X)
  pcs <- irlba::prcomp_irlba(X, n = 100, center = TRUE, scale. = FALSE)$x
  dir <- tempfile("pacmap-hnsw")
  dir.create(dir)
  write_f32(pcs, file.path(dir, "pcs.f32"))
  py <- c("import numpy as np, faiss, sys",
          "d = sys.argv[1]; X = np.fromfile(d + '/pcs.f32', dtype=np.float32).reshape(-1, 100)",
          "index = faiss.IndexHNSWFlat(100, 32, faiss.METRIC_L2); index.add(X)",
          "D, I = index.search(X, 74)",
          "I.astype(np.int32).tofile(d + '/I.i32'); D.astype(np.float32).tofile(d + '/D.f32')")
  writeLines(py, file.path(dir, "hnsw.py"))
  system2("/usr/bin/python3", c(file.path(dir, "hnsw.py"), dir), env = "OMP_NUM_THREADS=2")
  read_cols <- function(file, what) matrix(readBin(file, what, n * 74, size = 4), n, 74, byrow = TRUE)
  I <- read_cols(file.path(dir, "I.i32"), "integer") + 1L
  D <- read_cols(file.path(dir, "D.f32"), "numeric")
  unlink(dir, recursive = TRUE)
  hnsw <- list(idx = cbind(seq_len(n), I[, -1]), dist = cbind(0, sqrt(pmax(D[, -1], 0))))
  exact <- extended_knn(pcs, 23, 50, nn_kind = "exact", n_threads = n_threads)
  cat(sprintf("HNSW's recall of the 73 neighbours: %.4f\n",
              mean(hnsw$dist[, -1] <= exact$dist[, 74] * (1 + 1e-6))))
  near <- list(exact = enn_to_lsnn(exact, n_neighbors = 24), hnsw = enn_to_lsnn(hnsw, n_neighbors = 24))
  rows <- list()
  for (method in c("pacmap", "localmap")) {
    for (seed in 1:4) {
      for (graph in c("lsnn", "exact", "hnsw")) {
        g <- if (graph == "lsnn") NULL else near[[graph]]
        Y <- neighbor_embedding(X, method, nn_method = g, n_threads = n_threads, seed = seed)
        rows[[length(rows) + 1]] <- data.frame(method = method, graph = graph, seed = seed,
                                               knn10_label = label_accuracy(Y, Y, label, label, TRUE))
      }
    }
  }
  res <- do.call(rbind, rows)
  write.csv(res, file.path(results_dir(), "pacmap-graphs.csv"), row.names = FALSE)
  print(aggregate(knn10_label ~ method + graph, res, function(a) round(c(mean = mean(a), sd = sd(a)), 4)))
}

if ("clusters" %in% what) {
  C <- generate_clusters(2e5)
  cluster <- attr(C, "cluster")
  attr(C, "cluster") <- NULL
  p <- peer("pacmap", seq_len(nrow(C)), data = C)
  set.seed(1)
  t <- elapsed(Y <- neighbor_embedding(C, "pacmap", n_threads = n_threads))
  purity <- function(Y) {
    knn_label_accuracy(Y, Y, cluster, cluster, TRUE, n_threads)
  }
  res <- data.frame(who = c("official", "lsnn"), seconds = c(p$fit_seconds, t),
                    knn10_cluster = c(purity(p$Y), purity(Y)))
  res$ratio <- res$seconds / p$fit_seconds
  write.csv(res, file.path(results_dir(), "pacmap-clusters.csv"), row.names = FALSE)
  print(res)
}
