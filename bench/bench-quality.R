# Time of all the quality measures together against the time uwot::umap()
# takes to lay out the same data: all 70,000 Fashion-MNIST images, 2-D.
#
#   Rscript bench/bench-quality.R            # the full run (one uwot layout, one measurement)
#   Rscript bench/bench-quality.R --n=5000   # a quick check on the first n images
#
# uwot runs with its defaults (its own Annoy neighbour search, 200 epochs at
# this size) on 2 threads for both the search and the SGD (n_sgd_threads = 2,
# its fastest setting). The measures are embedding_quality() with its
# default sample sizes (trustworthiness and continuity on 2,000 points,
# 10^6 triplets, 10^6 pairs) and no precomputed graph: its time includes
# lsnn's exact 15-NN search of the data and of the embedding. The target is
# a ratio (measures / uwot) below 1. Run on an otherwise idle machine.

suppressPackageStartupMessages(library(lsnn))
source(file.path("bench", "common.R"))
ensure_packages("uwot")

args <- commandArgs(trailingOnly = TRUE)
n_arg <- grep("^--n=", args, value = TRUE)
n_threads <- 2

X <- fashion_data()
if (length(n_arg) > 0) X <- X[seq_len(as.integer(sub("^--n=", "", n_arg[1]))), , drop = FALSE]
cat(sprintf("Fashion-MNIST: %d x %d, %d threads\n", nrow(X), ncol(X), n_threads))

set.seed(42)
t_uwot <- elapsed(Y <- uwot::umap(X, n_threads = n_threads, n_sgd_threads = n_threads,
                                  verbose = FALSE))
cat(sprintf("uwot::umap():           %7.1f s\n", t_uwot))

set.seed(42)
t_all <- elapsed(q <- embedding_quality(X, Y, n_threads = n_threads))
cat(sprintf("embedding_quality():    %7.1f s\n", t_all))

# The measures one at a time, for the record (not part of the ratio).
set.seed(42)
parts <- c(
  neighbor_preservation = elapsed(neighbor_preservation(X, Y, n_threads = n_threads)),
  trustworthiness_and_continuity = elapsed(trustworthiness(X, Y, n_threads = n_threads)),
  random_triplet_accuracy = elapsed(random_triplet_accuracy(X, Y, n_threads = n_threads)),
  distance_correlation = elapsed(distance_correlation(X, Y, n_threads = n_threads))
)
for (p in names(parts)) cat(sprintf("  %-31s %6.1f s\n", p, parts[[p]]))
print(q, digits = 4)
cat(sprintf("ratio measures / uwot: %.3f (target: below 1)\n", t_all / t_uwot))
