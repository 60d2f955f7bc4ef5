# UMAP-15, LSNN-15 and UMAP-66 at full scale, measured.
#
# For each data set (the generated sets at their published sizes, the
# defaults of lsnn's generators, and all 70,000 Fashion-MNIST images when
# Debian's dataset-fashion-mnist is installed), the exact 66-nearest
# neighbour graph is computed once and cut into the plain 15-NN graph, the
# LSNN-15 graph and the 66-NN graph. Each graph is laid out by uwot::umap()
# (as nn_method, everything else at uwot's defaults) and, with --lsnn, by
# lsnn's own optimizer. Every embedding is measured by
# lsnn::embedding_quality() (k = 15, its default sample sizes) against the
# data, with the exact graph for the input neighbours.
#
# Run from the repository root with lsnn installed:
#   Rscript bench/quality-comparison.R                 # uwot only
#   Rscript bench/quality-comparison.R --lsnn          # uwot and lsnn's optimizer
#   Rscript bench/quality-comparison.R --lsnn --no-uwot --sets=scurvehole,fashion
#   Rscript bench/quality-comparison.R --store         # also copy the table to inst/extdata/
# lsnn's optimizer runs neighbor_embedding(method = "umap") at its defaults:
# the grid-approximated full gradient at about 10,000 points (1,000
# iterations, several minutes per layout on two cores) and negative sampling
# at 62,500 and 70,000 (about half a minute per layout).
# Writes bench/results/quality-comparison.{csv,rds} (the table; rows of an
# earlier run for other data sets or engines are kept, so the two engines can
# run at different times), quality-embeddings-<set>-<engine>.rds and
# quality-<set>-<engine>.png (three panels, the measures under each).
# Seeds are fixed: set.seed(42) before each data set is generated and before
# each layout; uwot runs its SGD on one thread (n_sgd_threads = 0), which
# makes its layouts reproducible.

suppressPackageStartupMessages(library(lsnn))
source(file.path("bench", "common.R"))

args <- commandArgs(trailingOnly = TRUE)
flag <- function(name) paste0("--", name) %in% args
option <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit) == 0) default else sub(paste0("^--", name, "="), "", hit[1])
}
run_uwot <- !flag("no-uwot")
run_lsnn <- flag("lsnn")
n_threads <- as.integer(option("threads", "2"))
all_sets <- c("scurvehole", "swissroll", "spheres", "hierarchical", "fashion")
sets <- strsplit(option("sets", paste(all_sets, collapse = ",")), ",")[[1]]
if (run_uwot) ensure_packages("uwot")

make_data <- function(name) {
  set.seed(42)
  switch(name,
    scurvehole = scurvehole(),
    swissroll = swissroll(),
    spheres = spheres(),
    hierarchical = hierarchical(),
    fashion = if (has_fashion_mnist()) fashion_mnist() else NULL,
    stop("unknown data set '", name, "'"))
}

# lsnn's optimizer: neighbor_embedding() (graphs through nn_method) where the
# installed lsnn has it, embed() before the rename.
lsnn_layout <- function(g) {
  ns <- asNamespace("lsnn")
  if (exists("neighbor_embedding", ns)) {
    get("neighbor_embedding", ns)(NULL, method = "umap", nn_method = g, n_threads = n_threads)
  } else {
    lsnn::embed(g, method = "umap", n_threads = n_threads)
  }
}

layout <- function(g, engine) {
  set.seed(42)
  if (engine == "uwot") {
    uwot::umap(NULL, nn_method = g, n_threads = n_threads, n_sgd_threads = 0, verbose = FALSE)
  } else {
    lsnn_layout(g)
  }
}

point_colours <- function(label) {
  if (is.factor(label)) {
    hcl.colors(nlevels(label), "Dark 3")[as.integer(label)]
  } else {
    hcl.colors(64, "Spectral")[cut(label, 64, labels = FALSE)]
  }
}

measures_line <- function(q) {
  sprintf("NP %.3f  T %.4f  C %.4f  RTA %.3f  rho %.3f", q$neighbor_preservation,
          q$trustworthiness, q$continuity, q$random_triplet_accuracy, q$distance_correlation)
}

three_panels <- function(file, emb, quality, label, title) {
  png(file, width = 1500, height = 560, res = 100)
  op <- par(mfrow = c(1, 3), mar = c(2.2, 0.5, 2.2, 0.5), oma = c(1.6, 0, 0, 0))
  cols <- point_colours(label)
  cex <- if (length(label) > 20000) 0.15 else 0.3
  for (g in names(emb)) {
    q <- quality[quality$graph == g, ]
    plot(emb[[g]], col = cols, pch = 20, cex = cex, axes = FALSE, xlab = "", ylab = "",
         main = paste(title, g), asp = 1)
    mtext(measures_line(q), side = 1, line = 0.7, cex = 0.75)
  }
  mtext(paste("NP: 15-NN preservation; T, C: trustworthiness, continuity (k = 15);",
              "RTA: random triplet accuracy; rho: Spearman correlation of distances"),
        side = 1, outer = TRUE, line = 0.3, cex = 0.7)
  par(op)
  dev.off()
}

table_file <- file.path(results_dir(), "quality-comparison.rds")
table <- if (file.exists(table_file)) readRDS(table_file) else NULL
engines <- c(if (run_uwot) "uwot", if (run_lsnn) "lsnn")

for (name in sets) {
  data <- make_data(name)
  if (is.null(data)) {
    message(name, ": skipped (dataset-fashion-mnist is not installed)")
    next
  }
  X <- data$X
  message(sprintf("%s: %d x %d, exact 66-NN graph", name, nrow(X), ncol(X)))
  t_graph <- elapsed(enn <- extended_knn(X, n_neighbors = 15, n_extra = 50,
                                         nn_kind = "exact", n_threads = n_threads))
  graphs <- list(`UMAP-15` = truncate_graph(enn, 15), `LSNN-15` = enn_to_lsnn(enn, 15),
                 `UMAP-66` = enn)
  overlap <- neighbor_overlap(graphs[["UMAP-15"]], graphs[["LSNN-15"]])
  for (engine in engines) {
    emb <- list()
    rows <- list()
    for (g in names(graphs)) {
      message(sprintf("  %s, %s", engine, g))
      t_layout <- elapsed(emb[[g]] <- layout(graphs[[g]], engine))
      set.seed(42)
      t_quality <- elapsed(q <- embedding_quality(X, emb[[g]], k = 15, nn = enn,
                                                  n_threads = n_threads))
      rows[[g]] <- cbind(dataset = name, rows = nrow(X), columns = ncol(X), engine = engine,
                         graph = g, overlap_knn_lsnn = overlap, q[, -1],
                         layout_seconds = t_layout, quality_seconds = t_quality)
      message("    ", measures_line(q))
    }
    quality <- do.call(rbind, rows)
    saveRDS(emb, file.path(results_dir(), sprintf("quality-embeddings-%s-%s.rds", name, engine)))
    three_panels(file.path(results_dir(), sprintf("quality-%s-%s.png", name, engine)),
                 emb, quality, data$label, paste0(name, if (engine == "lsnn") " (lsnn)" else ""))
    if (!is.null(table)) {
      table <- table[!(table$dataset == name & table$engine == engine), , drop = FALSE]
    }
    table <- rbind(table, quality)
    rownames(table) <- NULL
    saveRDS(table, table_file)
    utils::write.csv(table, file.path(results_dir(), "quality-comparison.csv"), row.names = FALSE)
  }
  rm(data, X, enn, graphs)
  invisible(gc())
}

info <- sprintf("lsnn %s, uwot %s, R %s, %s UTC", packageVersion("lsnn"),
                if (requireNamespace("uwot", quietly = TRUE)) packageVersion("uwot") else "-",
                getRversion(), format(Sys.time(), tz = "UTC"))
attr(table, "info") <- info
saveRDS(table, table_file)
print(table[, c("dataset", "engine", "graph", "neighbor_preservation", "trustworthiness",
                "continuity", "random_triplet_accuracy", "distance_correlation")], digits = 3)
message(info)
if (flag("store")) {
  dir.create(file.path("inst", "extdata"), showWarnings = FALSE)
  # (without the timings, which depend on the machine and its load)
  stored <- table[, !grepl("_seconds$", names(table))]
  utils::write.csv(stored, file.path("inst", "extdata", "quality-comparison.csv"), row.names = FALSE)
  message("stored in inst/extdata/quality-comparison.csv")
}
