# lsnn's searches behind Bioconductor's BiocNeighbors interface: LsnnParam,
# a BiocNeighborParam, and LsnnIndex, a BiocNeighborIndex, with methods for
# buildIndex(), findKNN() and queryKNN() (and, in BiocNeighbors 2.x,
# findDistance() and queryDistance()).
# The searches behind the methods are in R/bioc_searches.R.
#
# BiocNeighbors is only suggested, and loading it costs lsnn's users about a
# second, so lsnn does not load it: its classes and methods are defined when
# BiocNeighbors is loaded, by whoever loads it (register_bioc(), run from
# .onLoad when BiocNeighbors is already loaded, else from a hook on its
# loading). lsnn's namespace is sealed by then, so the class and method
# tables live in an environment of their own (bioc_state$where) that names
# lsnn as their package: objects saved with saveRDS() carry the class
# "LsnnParam" or "LsnnIndex" of package "lsnn", and methods finds the
# definitions again in a session where both are loaded.
#
# BiocNeighbors changed its generics twice; which set the installed version
# has decides the methods registered (bioc_interface()):
#   "v1"          1.x: buildIndex(X, ..., BNPARAM) on BNPARAM; findKNN(X, k, ...,
#                 BNINDEX, BNPARAM) and queryKNN() on (BNINDEX, BNPARAM)
#   "v2"          2.0 to 2.4: buildIndex(), findKNN(), queryKNN(), findDistance()
#                 and queryDistance() on (X, BNPARAM), X an index or data
#   "from_index"  2.6 and later: buildIndex(X, BNPARAM, transposed, ...) on
#                 BNPARAM; findKNN() and friends are functions that build the
#                 index and call findKnnFromIndex(BNINDEX, ...) and the like

bioc_state <- new.env(parent = emptyenv())

# The neighbours an index keeps for each row: it answers findKNN() for up to
# this many (kind "knn"; one fewer for "lsnn", whose candidates come on top)
# from its own graph, and its approximate queries walk that graph.
bioc_index_neighbors <- 16L

#' Locally scaled neighbours for Bioconductor (BiocNeighbors)
#'
#' `LsnnParam()` makes lsnn's searches a `BiocNeighborParam` of the
#' BiocNeighbors package, so that Bioconductor functions that take a
#' `BNPARAM` use lsnn's graphs: `scater::runUMAP()` and `scater::runTSNE()`
#' with `external_neighbors = TRUE`, `scran::buildSNNGraph()` and
#' `scran::buildKNNGraph()`, bluster's `makeSNNGraph()`, `makeKNNGraph()` and
#' `NNGraphParam()` clustering, and any call of BiocNeighbors'
#' `buildIndex()`, `findKNN()` and `queryKNN()`.
#'
#' **What k means.** BiocNeighbors asks for the `k` nearest neighbours of
#' each point, the point itself left out. With `kind = "knn"` these are the
#' `k` nearest other rows, from [extended_knn()]. With `kind = "lsnn"` they
#' are the locally scaled neighbours of [locally_scaled_knn()] with
#' `n_neighbors = k + 1` (which counts the row itself), without the row
#' itself: `scater::runUMAP(external_neighbors = TRUE, n_neighbors = 15)`,
#' which asks for 14 and puts each point in front, thereby runs UMAP on
#' `locally_scaled_knn(X, n_neighbors = 15)`. A `k` beyond the other rows
#' is capped, with a warning, as BiocNeighbors does.
#'
#' **Queries.** `queryKNN()` with `kind = "knn"` is [extended_knn_query()];
#' with `kind = "lsnn"` it is [locally_scaled_knn_query()]: each query
#' point's locally scaled neighbours among the reference points, scaled by
#' the reference points' own local scales.
#'
#' **Indexes.** `BiocNeighbors::buildIndex(X, BNPARAM = LsnnParam())`
#' returns an `LsnnIndex`: the index of [extended_knn()] with `ret_index =
#' TRUE` (the data, each row's 16 nearest neighbours, and with `kind =
#' "lsnn"` the `n_extra + 1` candidates after them, and the local scales)
#' with the settings of the `LsnnParam`. It is plain R data, so it survives
#' [saveRDS()] and [readRDS()] with the same answers, which BiocNeighbors'
#' Annoy and HNSW indexes, held in files or in memory outside R, do not.
#' `findKNN()` on an index takes the neighbours from its graph when `k` is
#' at most 16 (15 for `kind = "lsnn"`) and searches its data again beyond.
#' With `nn_kind = "exact"` both give the same graph as a search of the data;
#' with `"approx"` they are two approximate graphs, which may differ.
#'
#' **BiocNeighbors' arguments.** `get.index`, `get.distance` and `subset`
#' (row numbers, logical or row names) are honoured, and so are BiocNeighbors
#' 1.x's `last` (only the last `last` of the `k` neighbours) and
#' `transposed`, and 2.x's `get.index = "transposed"`. The result has no
#' self column and no dimnames, as BiocNeighbors' own. `raw.index` and
#' `warn.ties` have nothing to change (lsnn keeps the rows in their order and
#' breaks ties by row number) and are ignored. The number of threads is the
#' largest of `n_threads`, BiocNeighbors 2.x's `num.threads` and the workers
#' of a `BPPARAM`; results do not depend on it. The range searches
#' (`findNeighbors()`, `queryNeighbors()`) have no lsnn method.
#'
#' **Cosine.** lsnn's cosine distance is 1 minus the cosine similarity;
#' BiocNeighbors' "Cosine" is the Euclidean distance of the rows scaled to
#' unit length, the square root of twice that. The neighbours are the same,
#' the distances are not: convert with `sqrt(2 * d)` where BiocNeighbors'
#' values are needed.
#'
#' BiocNeighbors is a suggested package: lsnn defines the `LsnnParam` and
#' `LsnnIndex` classes and their methods when BiocNeighbors is loaded (by
#' `LsnnParam()` itself or by any package that uses it). BiocNeighbors 1.x
#' and 2.x are both supported, each through its own generics.
#'
#' @param kind `"lsnn"` (locally scaled neighbours) or `"knn"` (nearest
#'   neighbours).
#' @param nn_kind `"exact"`, `"approx"` or `"partition"`: the search, as in
#'   [extended_knn()]; every search and query of this parameter uses it
#'   (the queries of `"partition"`, which finds the exact graph, are exact).
#' @param metric `"euclidean"`, `"cosine"`, `"correlation"` or
#'   `"manhattan"` (see [extended_knn()]). The `distance` slot that
#'   BiocNeighbors reads holds its name in BiocNeighbors' spelling
#'   ("Euclidean", ...).
#' @param n_extra With `kind = "lsnn"`, the candidates searched beyond the
#'   `k + 1` kept (50, as [locally_scaled_knn()]); unused by `kind = "knn"`.
#' @param scale_from,scale_to With `kind = "lsnn"`, the columns of each
#'   row's extended graph, the row itself being column 1, whose mean
#'   distance is its local scale (see [locally_scaled_knn()]).
#' @param n_threads Number of threads, at least; see Details. `NULL`: when the
#'   search runs, [default_n_threads()].
#' @param nn_args Settings of the approximate search: the result of
#'   [approx_control()] or a list of its arguments.
#' @param epsilon The approximate query's slack (see [extended_knn_query()]).
#' @param seed `NULL` (the default) to draw the approximate search's random
#'   numbers from R's generator; or a whole number: every search and query
#'   then runs under [set.seed()] with it, R's generator left as it was, so
#'   the same data give the same graph in every call.
#' @return An object of class `LsnnParam`, extending BiocNeighbors'
#'   `BiocNeighborParam`, with one slot per argument and the `distance`
#'   slot.
#' @seealso [locally_scaled_knn()], [extended_knn()],
#'   [as_seurat_neighbor()] for Seurat.
#' @aliases LsnnParam-class LsnnIndex LsnnIndex-class
#' @examples
#' if (requireNamespace("BiocNeighbors", quietly = TRUE)) {
#'   X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#'   param <- LsnnParam(kind = "lsnn", nn_kind = "exact")
#'   print(param)
#'   nn <- BiocNeighbors::findKNN(X, k = 14, BNPARAM = param)
#'   print(dim(nn$index))
#'   # the same neighbours as lsnn's own LSNN graph of 15 columns, minus self
#'   g <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact")
#'   print(identical(nn$index, g$idx[, -1]))
#'
#'   index <- BiocNeighbors::buildIndex(X[1:100, ], BNPARAM = param)
#'   q <- BiocNeighbors::queryKNN(BNINDEX = index, query = X[101:110, ], k = 10)
#'   print(dim(q$index))
#' }
#' \donttest{
#' if (requireNamespace("scater", quietly = TRUE) &&
#'     requireNamespace("SingleCellExperiment", quietly = TRUE)) {
#'   sce <- SingleCellExperiment::SingleCellExperiment(
#'     assays = list(logcounts = t(X)))
#'   SingleCellExperiment::reducedDim(sce, "PCA") <- X
#'   sce <- scater::runUMAP(sce, dimred = "PCA", external_neighbors = TRUE,
#'                          BNPARAM = param)
#' }
#' }
#' @export
LsnnParam <- function(kind = "lsnn", nn_kind = "approx", metric = "euclidean", n_extra = 50,
                      scale_from = 5, scale_to = 7, n_threads = NULL, nn_args = approx_control(),
                      epsilon = 0.02, seed = NULL) {
  settings <- check_lsnn_param(list(kind = kind, nn_kind = nn_kind, metric = metric,
                                    n_extra = n_extra, scale_from = scale_from,
                                    scale_to = scale_to, n_threads = n_threads,
                                    nn_args = nn_args, epsilon = epsilon, seed = seed),
                               function(slot) slot)
  require_bioc("LsnnParam()")
  settings$seed <- if (is.null(settings$seed)) integer(0) else settings$seed
  settings$nn_args <- unclass(settings$nn_args)
  do.call(methods::new, c(list("LsnnParam", distance = bioc_distance_name(settings$metric)),
                          settings))
}

# The settings of an LsnnParam, checked: `values` holds them by slot name,
# `label(slot)` is the name an error gives each (the argument of
# LsnnParam(), or 'BNPARAM@slot' for a parameter object read back).
check_lsnn_param <- function(values, label) {
  kind <- check_choice(values$kind, label("kind"), c("lsnn", "knn"))
  nn_kind <- check_choice(values$nn_kind, label("nn_kind"), nn_kinds)
  # (BiocNeighbors names no Hamming distance)
  metric <- check_choice(values$metric, label("metric"), setdiff(knn_metrics, "hamming"))
  n_extra <- check_whole(values$n_extra, label("n_extra"), min = 0, clamp = TRUE,
                         max = big_int - 1L)
  scale <- c(check_whole(values$scale_from, label("scale_from"), min = 1),
             check_whole(values$scale_to, label("scale_to"), min = 1))
  if (scale[1] > scale[2]) {
    stop_arg("'", label("scale_from"), "' (", scale[1], ") must not be greater than '",
             label("scale_to"), "' (", scale[2], ")")
  }
  # (NULL, kept as NA: the machine's default when the search runs, see
  # default_n_threads())
  n_threads <- values$n_threads
  n_threads <- if (is.null(n_threads) || identical(n_threads, NA_integer_)) NA_integer_ else
    max(check_whole(n_threads, label("n_threads"), min = 0), 1L)
  nn_args <- values$nn_args
  if (!inherits(nn_args, "lsnn_approx_control")) {
    if (!is.null(nn_args) && !is.list(nn_args)) {
      stop_arg("'", label("nn_args"), "' must be the result of approx_control() or a named ",
               "list of its arguments")
    }
    nn_args <- check_approx_control(nn_args)
  }
  epsilon <- check_number(values$epsilon, label("epsilon"), min = 0)
  seed <- values$seed
  if (length(seed) > 0 || !is.null(seed) && !is.numeric(seed)) {
    seed <- check_whole(seed, label("seed"), min = -big_int, max = big_int)
  } else {
    seed <- NULL
  }
  list(kind = kind, nn_kind = nn_kind, metric = metric, n_extra = n_extra,
       scale_from = scale[1], scale_to = scale[2], n_threads = n_threads,
       nn_args = nn_args, epsilon = epsilon, seed = seed)
}

# The settings an LsnnParam object holds, checked again: the object may have
# been changed slot by slot or read from a file.
param_settings <- function(param, name = "BNPARAM") {
  slots <- c("kind", "nn_kind", "metric", "n_extra", "scale_from", "scale_to", "n_threads",
             "nn_args", "epsilon", "seed")
  values <- lapply(stats::setNames(slots, slots), function(s) methods::slot(param, s))
  check_lsnn_param(values, function(slot) paste0(name, "@", slot))
}

bioc_distance_name <- function(metric) {
  c(euclidean = "Euclidean", cosine = "Cosine", correlation = "Correlation",
    manhattan = "Manhattan")[[metric]]
}

# BiocNeighbors loaded and lsnn's classes and methods registered with it, or
# an error naming what needs it.
require_bioc <- function(what) {
  if (!requireNamespace("BiocNeighbors", quietly = TRUE)) {
    stop_arg(what, " needs the Bioconductor package BiocNeighbors: ",
             "BiocManager::install(\"BiocNeighbors\")")
  }
  register_bioc()
}

# ---- registration ----

# Which generics the loaded BiocNeighbors has (see the top of this file).
bioc_interface <- function(bn) {
  if (exists("findKnnFromIndex", envir = bn, inherits = FALSE)) return("from_index")
  find_knn <- get("findKNN", envir = bn, inherits = FALSE)
  if ("BNINDEX" %in% find_knn@signature) "v1" else "v2"
}

# Defines LsnnParam, LsnnIndex and their methods for the BiocNeighbors
# namespace now loaded, once per loaded BiocNeighbors.
register_bioc <- function() {
  bn <- asNamespace("BiocNeighbors")
  if (identical(bioc_state$namespace, bn)) return(invisible(bioc_state$interface))
  where <- new.env(parent = environment(register_bioc))
  assign(".packageName", "lsnn", envir = where)
  interface <- bioc_interface(bn)
  generic <- function(name) get(name, envir = bn, inherits = FALSE)
  set_method <- function(name, signature, definition) {
    methods::setMethod(generic(name), signature, definition, where = where)
  }

  methods::setClass("LsnnParam", contains = "BiocNeighborParam", where = where,
                    slots = c(kind = "character", nn_kind = "character", metric = "character",
                              n_extra = "integer", scale_from = "integer",
                              scale_to = "integer", n_threads = "integer", nn_args = "list",
                              epsilon = "numeric", seed = "integer"))
  index_slots <- c(lsnn_index = "list", param = "LsnnParam")
  # (BiocNeighbors 1.x's BiocNeighborIndex has the row names' slot NAMES, and
  # a `data` slot of the transposed data that an LsnnIndex leaves empty)
  if (!"NAMES" %in% methods::slotNames("BiocNeighborIndex")) index_slots <- c(index_slots, NAMES = "ANY")
  methods::setClass("LsnnIndex", contains = "BiocNeighborIndex", slots = index_slots,
                    where = where)
  methods::setMethod("show", "LsnnParam", show_lsnn_param, where = where)
  methods::setMethod("show", "LsnnIndex", show_lsnn_index, where = where)
  methods::setMethod("dim", "LsnnIndex", function(x) dim(index_of(x, "x")$data), where = where)

  switch(interface,
         v1 = bioc_methods_v1(set_method, bn),
         v2 = bioc_methods_v2(set_method),
         bioc_methods_from_index(set_method, bn))
  bioc_state$where <- where
  bioc_state$interface <- interface
  bioc_state$namespace <- bn
  invisible(interface)
}

# The methods of BiocNeighbors 1.x's generics (interface "v1"), defined
# through `set_method` (register_bioc()'s).
bioc_methods_v1 <- function(set_method, bn) {
  set_method("buildIndex", "LsnnParam", function(X, ..., BNPARAM) {
    bioc1_build(X, BNPARAM, ...)
  })
  set_method("findKNN", c("missing", "LsnnParam"), function(X, k, ..., BNINDEX, BNPARAM) {
    bioc1_find(X, k, BNPARAM, ...)
  })
  set_method("queryKNN", c("missing", "LsnnParam"), function(X, query, k, ..., BNINDEX, BNPARAM) {
    bioc1_query(bioc1_build(X, BNPARAM, ...), query, k, ...)
  })
  for (signature in list(c("LsnnIndex", "missing"), c("LsnnIndex", "LsnnParam"))) {
    set_method("findKNN", signature, function(X, k, ..., BNINDEX, BNPARAM) {
      bioc1_find_index(BNINDEX, k, ...)
    })
    set_method("queryKNN", signature, function(X, query, k, ..., BNINDEX, BNPARAM) {
      bioc1_query(BNINDEX, query, k, ...)
    })
  }
  if (exists("bndata", envir = bn, inherits = FALSE)) {
    # (BiocNeighbors 1.x's indexes hold their data transposed)
    set_method("bndata", "LsnnIndex", function(x) t(as.matrix(index_of(x, "x")$data)))
  }
  invisible()
}

# The methods of BiocNeighbors 2.x's generics (interface "v2").
bioc_methods_v2 <- function(set_method) {
  for (cls in c("ANY", "matrix")) {
    set_method("buildIndex", c(cls, "LsnnParam"),
               function(X, transposed = FALSE, ..., BNPARAM = NULL) {
                 bioc2_build(X, BNPARAM, transposed)
               })
    set_method("findKNN", c(cls, "LsnnParam"),
               function(X, k, get.index = TRUE, get.distance = TRUE, num.threads = 1,
                        subset = NULL, ..., BNPARAM = NULL) {
                 bioc2_find(bioc2_data(X, BNPARAM, ...), k, get.index, get.distance,
                            num.threads, subset, ...)
               })
    set_method("queryKNN", c(cls, "LsnnParam"),
               function(X, query, k, get.index = TRUE, get.distance = TRUE, num.threads = 1,
                        subset = NULL, transposed = FALSE, ..., BNPARAM = NULL) {
                 bioc2_query(bioc2_build(X, BNPARAM, transposed), query, k, get.index,
                             get.distance, num.threads, subset, transposed, ...)
               })
    set_method("findDistance", c(cls, "LsnnParam"),
               function(X, k, num.threads = 1, subset = NULL, ..., BNPARAM = NULL) {
                 bioc2_find(bioc2_data(X, BNPARAM, ...), k, FALSE, TRUE, num.threads,
                            subset, ..., last_only = TRUE)
               })
    set_method("queryDistance", c(cls, "LsnnParam"),
               function(X, query, k, num.threads = 1, subset = NULL, transposed = FALSE, ...,
                        BNPARAM = NULL) {
                 bioc2_query(bioc2_build(X, BNPARAM, transposed), query, k, FALSE, TRUE,
                             num.threads, subset, transposed, ..., last_only = TRUE)
               })
  }
  for (param in c("ANY", "LsnnParam")) {
    set_method("findKNN", c("LsnnIndex", param),
               function(X, k, get.index = TRUE, get.distance = TRUE, num.threads = 1,
                        subset = NULL, ..., BNPARAM = NULL) {
                 bioc2_find(X, k, get.index, get.distance, num.threads, subset, ...)
               })
    set_method("queryKNN", c("LsnnIndex", param),
               function(X, query, k, get.index = TRUE, get.distance = TRUE, num.threads = 1,
                        subset = NULL, transposed = FALSE, ..., BNPARAM = NULL) {
                 bioc2_query(X, query, k, get.index, get.distance, num.threads, subset,
                             transposed, ...)
               })
    set_method("findDistance", c("LsnnIndex", param),
               function(X, k, num.threads = 1, subset = NULL, ..., BNPARAM = NULL) {
                 bioc2_find(X, k, FALSE, TRUE, num.threads, subset, ..., last_only = TRUE)
               })
    set_method("queryDistance", c("LsnnIndex", param),
               function(X, query, k, num.threads = 1, subset = NULL, transposed = FALSE, ...,
                        BNPARAM = NULL) {
                 bioc2_query(X, query, k, FALSE, TRUE, num.threads, subset, transposed, ...,
                             last_only = TRUE)
               })
  }
  invisible()
}

# The methods of the 2.x generics that work from an index
# (findKnnFromIndex() and the like).
bioc_methods_from_index <- function(set_method, bn) {
  set_method("buildIndex", "LsnnParam", function(X, BNPARAM, transposed = FALSE, ...) {
    bioc2_build(X, BNPARAM, transposed)
  })
  set_method("findKnnFromIndex", "LsnnIndex",
             function(BNINDEX, k, get.index = TRUE, get.distance = TRUE, num.threads = 1,
                      subset = NULL, ...) {
               bioc2_find(BNINDEX, k, get.index, get.distance, num.threads, subset, ...)
             })
  set_method("queryKnnFromIndex", "LsnnIndex",
             function(BNINDEX, query, k, get.index = TRUE, get.distance = TRUE,
                      num.threads = 1, subset = NULL, transposed = FALSE, ...) {
               bioc2_query(BNINDEX, query, k, get.index, get.distance, num.threads, subset,
                           transposed, ...)
             })
  set_method("findDistanceFromIndex", "LsnnIndex",
             function(BNINDEX, k, num.threads = 1, subset = NULL, ...) {
               bioc2_find(BNINDEX, k, FALSE, TRUE, num.threads, subset, ..., last_only = TRUE)
             })
  if (exists("queryDistanceFromIndex", envir = bn, inherits = FALSE)) {
    set_method("queryDistanceFromIndex", "LsnnIndex",
               function(BNINDEX, query, k, num.threads = 1, subset = NULL, transposed = FALSE,
                        ...) {
                 bioc2_query(BNINDEX, query, k, FALSE, TRUE, num.threads, subset, transposed,
                             ..., last_only = TRUE)
               })
  }
  invisible()
}

# Registration when BiocNeighbors loads: a failure is reported, never
# allowed to stop BiocNeighbors (and whatever loads it) from loading.
register_bioc_on_load <- function(...) {
  tryCatch(register_bioc(), error = function(e) {
    warning("lsnn could not define its BiocNeighbors methods: ", conditionMessage(e),
            call. = FALSE)
  })
}

.onLoad <- function(libname, pkgname) {
  if (isNamespaceLoaded("BiocNeighbors")) register_bioc_on_load()
  setHook(packageEvent("BiocNeighbors", "onLoad"), register_bioc_on_load)
}

.onUnload <- function(libpath) {
  hook <- packageEvent("BiocNeighbors", "onLoad")
  kept <- Filter(function(f) !identical(f, register_bioc_on_load), getHook(hook))
  setHook(hook, if (length(kept) > 0) kept, "replace")
}

# ---- show ----

show_lsnn_param <- function(object) {
  cat("class: LsnnParam\n")
  bioc_describe(param_settings(object, "object"))
}

show_lsnn_index <- function(object) {
  index <- index_of(object, "object")
  cat("class: LsnnIndex\n")
  cat(sprintf("dim: %d %d\n", nrow(index$data), ncol(index$data)))
  bioc_describe(param_settings(object@param, "object@param"))
}

bioc_describe <- function(s) {
  if (s$kind == "lsnn") {
    cat(sprintf("kind: lsnn (locally scaled neighbours among k + %d candidates, local scales from columns %d to %d)\n",
                s$n_extra + 1L, s$scale_from, s$scale_to))
  } else {
    cat("kind: knn (nearest neighbours)\n")
  }
  cat(sprintf("search: %s, metric: %s, threads: %d, seed: %s\n", s$nn_kind, s$metric,
              if (is.na(s$n_threads)) default_n_threads() else s$n_threads,
              if (is.null(s$seed)) "none" else s$seed))
}
