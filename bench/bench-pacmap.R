# PaCMAP and LocalMAP against the official implementation, run from its
# source (PACMAP_SRC: a checkout of https://github.com/YingfanWang/PaCMAP)
# with Debian's python3-numba, python3-sklearn and python3-faiss, 2 numba
# threads, its functions compiled before the clock starts.
#
#   PACMAP_SRC=/path/to/PaCMAP Rscript bench/bench-pacmap.R [fit] [transform]
#
# fit: all 70,000 Fashion-MNIST images / 255 in 2-D, both methods: seconds,
# 10-NN label accuracy, random-triplet accuracy and 15-NN preservation.
# transform: a model of the 60,000 training images places the 10,000 test
# images; the 10-NN label accuracy of each test image among the training
# points. seeds: fit's measures for 5 runs of each (lsnn with seeds 1 to 5,
# the official at its default random_state = None, so a new one each run),
# their means and sd, and Welch's t-test of the 10-NN label accuracies.
# Results go to bench/results/pacmap-*.csv.
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

# The official implementation on the rows of `train` (and `test`, placed by
# its transform()).
peer <- function(method, train, test = NULL) {
  dir <- tempfile("pacmap-peer")
  dir.create(dir)
  f <- function(name) file.path(dir, name)
  write_f32(X[train, ], f("x.f32"))
  args <- c("bench/pacmap-peer.py", method, f("x.f32"), length(train), ncol(X), f("y.f32"))
  if (!is.null(test)) {
    write_f32(X[test, ], f("new.f32"))
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
