# Fuzz suite: every exported function meets bad and extreme inputs, one
# argument at a time, and must answer with an R error, a warning, or a valid
# finite result (indices in 1..n, no NaN); never a crash, a hang or NaN.
# Exact error messages are not asserted, but no error or warning may be one
# of R's own (a bad value that reached code not meant for it, such as
# "missing value where TRUE/FALSE needed"): the invariant is "lsnn's error |
# valid result".
#
# The full tier (helper-tiers.R) runs the default set, about 1,900 cases;
# the quick tier a fixed third of them, chosen by a hash of each case's
# label. LSNN_FUZZ_LONG=true adds more data sizes, metrics, methods and
# random IDX files.

fuzz_long <- identical(tolower(Sys.getenv("LSNN_FUZZ_LONG")), "true")
lsnn_fun <- function(name) get(name, envir = asNamespace("lsnn"))

# ---- the invariant ----

# Runs f(), returning list(error = condition or NULL, value). Warnings and
# messages are allowed (and silenced); a time limit turns a hang into an
# error that fails the case.
fuzz_run <- function(f) {
  setTimeLimit(elapsed = if (fuzz_long) 300 else 60, transient = TRUE)
  on.exit(setTimeLimit(elapsed = Inf))
  out <- list(error = NULL, value = NULL, warnings = character())
  withCallingHandlers(
    tryCatch(out$value <- f(), error = function(e) out$error <<- e),
    warning = function(w) {
      out$warnings <<- c(out$warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    },
    message = function(m) invokeRestart("muffleMessage")
  )
  out
}

# Errors and warnings of R itself, of Rcpp or of the core reaching the user:
# a value that no check stopped.
internal_patterns <- c(
  "missing value where TRUE/FALSE needed", "the condition has length", "unused argument",
  "argument is of length zero", "non-numeric argument", "invalid argument type",
  "subscript out of bounds", "^k must be between", "bad_alloc", "std::",
  "vector size specified is too large", "invalid '(ncol|nrow)' value", "operator is invalid",
  "cannot coerce", "not subsettable", "error reading from the connection", "is missing, with no default",
  "NAs introduced by coercion", "integer overflow", "invalid or incomplete compressed data",
  "number of workers")

# The messages of a run that are R's own, labelled.
internal_messages <- function(r, label) {
  msgs <- c(if (!is.null(r$error)) conditionMessage(r$error), r$warnings)
  # lsnn's own messages start with the argument's name (and may quote R's)
  msgs <- msgs[!grepl("^'[A-Za-z_.$]+'", msgs)]
  bad <- msgs[vapply(msgs, function(m) any(vapply(internal_patterns, grepl, logical(1), m)),
                     logical(1))]
  if (length(bad)) paste0(label, ": R's own message: ", unique(bad)) else character()
}

is_graph_value <- function(v) {
  is.list(v) && !is.data.frame(v) && all(c("idx", "dist") %in% names(v)) &&
    is.matrix(v$idx) && is.matrix(v$dist)
}

# The problems with a result, as strings (none: valid). `n`: the number of
# points when known, for the index range of graphs.
value_problems <- function(v, n = NULL, where = "value") {
  p <- character()
  if (is_graph_value(v)) {
    nn <- if (is.null(n)) nrow(v$idx) else n
    if (!is.integer(v$idx)) p <- c(p, paste(where, "idx not integer"))
    if (anyNA(v$idx) || any(v$idx < 1 | v$idx > nn)) p <- c(p, paste(where, "idx outside 1..n"))
    if (!identical(dim(v$idx), dim(v$dist))) p <- c(p, paste(where, "idx and dist differ in shape"))
    if (!all(is.finite(v$dist))) p <- c(p, paste(where, "dist not finite"))
    if (any(v$dist < 0, na.rm = TRUE)) p <- c(p, paste(where, "dist negative"))
    rest <- v[setdiff(names(v), c("idx", "dist"))]
    for (nm in names(rest)) p <- c(p, value_problems(rest[[nm]], n, paste0(where, "$", nm)))
    return(p)
  }
  if (methods::is(v, "sparseMatrix")) {
    x <- methods::as(v, "dgCMatrix")@x
    if (!all(is.finite(x))) p <- c(p, paste(where, "sparse entries not finite"))
    return(p)
  }
  if (is.list(v)) {
    for (i in seq_along(v)) {
      nm <- if (!is.null(names(v)) && nzchar(names(v)[i])) names(v)[i] else i
      p <- c(p, value_problems(v[[i]], n, paste0(where, "$", nm)))
    }
    return(p)
  }
  if (is.double(v) || is.complex(v)) {
    if (any(is.nan(v))) p <- c(p, paste(where, "contains NaN"))
  }
  p
}

# The quick tier's share of the cases: those whose label hashes to 0
# modulo fuzz_share, the same cases in every run and on every machine.
fuzz_share <- if (full_tier() || fuzz_long) 1L else 3L
fuzz_selected <- function(label) {
  codes <- utf8ToInt(label)
  fuzz_share == 1L || sum(codes * seq_along(codes)) %% fuzz_share == 0
}

# One case: the call must error, or return a value without problems; any
# extra check(value) must hold too.
fuzz_cases_run <- 0
fuzz_case <- function(label, f, n = NULL, check = NULL) {
  if (!fuzz_selected(label)) return(character())
  fuzz_cases_run <<- fuzz_cases_run + 1
  r <- fuzz_run(f)
  internal <- internal_messages(r, label)
  if (!is.null(r$error)) {
    msg <- conditionMessage(r$error)
    # a time limit reached is a hang, not an answer
    if (grepl("reached elapsed time limit", msg, fixed = TRUE)) {
      return(paste0(label, ": hangs"))
    }
    return(internal)
  }
  p <- c(internal, value_problems(r$value, n))
  if (!is.null(check) && length(p) == 0) {
    extra <- check(r$value)
    if (!isTRUE(extra)) p <- c(p, if (is.character(extra)) extra else "check failed")
  }
  if (length(p)) paste0(label, ": ", paste(unique(p), collapse = "; ")) else character()
}

expect_fuzz_clean <- function(problems) {
  expect(length(problems) == 0,
         paste0(length(problems), " fuzz case(s) broke the invariant:\n",
                paste(utils::head(problems, 30), collapse = "\n")))
}

# ---- inputs ----

set.seed(2024)
n_base <- 40
X0 <- matrix(rnorm(n_base * 4), n_base)

bad_data <- function() {
  X <- X0
  withNA <- X; withNA[3, 2] <- NA
  withNaN <- X; withNaN[5, 1] <- NaN
  withInf <- X; withInf[7, 3] <- Inf
  withNegInf <- X; withNegInf[2, 2] <- -Inf
  d <- list(
    ok = X,
    integer = matrix(sample(-5:5, n_base * 4, TRUE), n_base),
    na = withNA, nan = withNaN, inf = withInf, neg_inf = withNegInf,
    all_na = matrix(NA_real_, 10, 3),
    rows0 = X[0, , drop = FALSE], rows1 = X[1, , drop = FALSE], rows2 = X[1:2, ],
    rows3 = X[1:3, ], cols0 = X[, 0, drop = FALSE], cols1 = X[, 1, drop = FALSE],
    character = matrix(as.character(X), n_base),
    factor = factor(sample(letters[1:3], n_base, TRUE)),
    logical = matrix(X > 0, n_base),
    complex = matrix(complex(real = X, imaginary = 1), n_base),
    list = as.list(seq_len(n_base)),
    vector = X[, 1],
    null = NULL,
    array3 = array(X, c(n_base, 2, 2)),
    df_numeric = as.data.frame(X),
    df_mixed = data.frame(a = X[, 1], b = letters[(seq_len(n_base) %% 26) + 1],
                          c = factor(seq_len(n_base) %% 3), d = X[, 2] > 0, e = X[, 3]),
    df_character = data.frame(a = letters[1:10], b = LETTERS[1:10]),
    df_empty = data.frame(),
    huge = X * 1e200, tiny = X * 1e-200, max = X / max(abs(X)) * 1e308,
    subnormal = X * 1e-310, mixed_scale = rbind(X[1:20, ] * 1e200, X[21:40, ] * 1e-200),
    duplicated = rbind(X, X[rep(1, 30), ]),
    identical = matrix(1, n_base, 4), zeros = matrix(0, n_base, 4),
    one_distinct = rbind(matrix(0, n_base - 1, 4), c(1, 0, 0, 0)),
    dgc = Matrix::Matrix(X * (abs(X) > 0.7), sparse = TRUE),
    dgc_na = local({ s <- Matrix::Matrix(X * (abs(X) > 0.7), sparse = TRUE); s@x[1] <- NA; s }),
    dgc_empty_rows = Matrix::Matrix(rbind(X[1:20, ] * (abs(X[1:20, ]) > 0.7), matrix(0, 20, 4)),
                                    sparse = TRUE),
    dgt = methods::as(Matrix::Matrix(X * (abs(X) > 0.7), sparse = TRUE), "TsparseMatrix"),
    dgr = methods::as(Matrix::Matrix(X * (abs(X) > 0.7), sparse = TRUE), "RsparseMatrix"),
    dsc = Matrix::forceSymmetric(Matrix::Matrix(crossprod(X[1:4, ]), sparse = TRUE)),
    lgc = Matrix::Matrix(X > 1, sparse = TRUE),
    dge = Matrix::Matrix(X, sparse = FALSE)
  )
  if (fuzz_long) {
    set.seed(7)
    d$wide <- matrix(rnorm(30 * 500), 30)
    d$bigger <- matrix(rnorm(600 * 6), 600)
    d$bigger_huge <- d$bigger * 1e250
    d$bigger_dups <- d$bigger[rep(1:60, 10), ]
    d$clustered_dups <- matrix(rep(rnorm(5 * 3), each = 60), 300)
  }
  d
}

bad_numbers <- list(na = NA, na_real = NA_real_, nan = NaN, inf = Inf, neg_inf = -Inf,
                    neg = -1, zero = 0, fraction = 1.5, huge = 1e10,
                    int_max = .Machine$integer.max, big_double = 1e300, tiny = 1e-300,
                    character = "a", logical = TRUE, null = NULL, two = c(2, 3),
                    empty = numeric(0), list = list(3), complex = 1i)

bad_flags <- list(na = NA, number = 2, character = "yes", two = c(TRUE, FALSE), null = NULL)

# Replaces argument `arg` of `args` by each value of `values` in a call to f.
fuzz_argument <- function(fname, args, arg, values, n = NULL, check = NULL) {
  f <- lsnn_fun(fname)
  problems <- character()
  for (v in names(values)) {
    a <- args
    if (is.null(values[[v]])) a[arg] <- list(NULL) else a[[arg]] <- values[[v]]
    problems <- c(problems, fuzz_case(sprintf("%s(%s = <%s>)", fname, arg, v),
                                      function() do.call(f, a), n = n, check = check))
  }
  problems
}

# Rows sorted by distance, self first.
knn_check <- function(g) {
  if (ncol(g$dist) > 1 && any(g$dist[, -1, drop = FALSE] < g$dist[, -ncol(g$dist), drop = FALSE])) {
    return("rows not sorted by distance")
  }
  if (!all(g$dist[, 1] == 0)) return("first column not at distance 0")
  TRUE
}

# ---- data arguments ----

test_that("neighbour searches answer every kind of data with an error or a valid graph", {
  data <- bad_data()
  metrics <- if (fuzz_long) c("euclidean", "cosine", "correlation", "manhattan") else
    c("euclidean", "cosine")
  problems <- character()
  for (kind in c("exact", "approx")) {
    for (metric in metrics) {
      problems <- c(problems, fuzz_argument(
        "extended_knn", list(n_neighbors = 5, n_extra = 3, nn_kind = kind, metric = metric),
        "X", data, check = knn_check))
    }
  }
  problems <- c(problems, fuzz_argument(
    "locally_scaled_knn", list(n_neighbors = 5, n_extra = 5, nn_kind = "exact"), "X", data))
  expect_fuzz_clean(problems)
})

test_that("affinities and embeddings answer every kind of data with an error or a valid result", {
  data <- bad_data()
  problems <- c(
    fuzz_argument("perplexity_affinities", list(perplexity = 5), "X", data),
    fuzz_argument("neighbor_embedding", list(method = "tsne", perplexity = 5, max_iter = 20,
                                   n_threads = 2), "X", data),
    fuzz_argument("neighbor_embedding", list(method = "umap", n_neighbors = 5, max_iter = 20), "X", data)
  )
  if (fuzz_long) {
    problems <- c(problems,
      fuzz_argument("neighbor_embedding", list(method = "largevis", perplexity = 5, max_iter = 20), "X", data),
      fuzz_argument("neighbor_embedding", list(method = "tumap", n_neighbors = 5, max_iter = 20,
                                     init = "random"), "X", data))
  }
  expect_fuzz_clean(problems)
})

# ---- parameters ----

test_that("numeric and logical parameters out of range give an error or a valid result", {
  X <- X0
  problems <- character()
  knn_args <- list(X = X, n_neighbors = 5, n_extra = 3, nn_kind = "exact")
  for (arg in c("n_neighbors", "n_extra", "n_threads")) {
    problems <- c(problems, fuzz_argument("extended_knn", knn_args, arg, bad_numbers,
                                          n = n_base, check = knn_check))
  }
  problems <- c(problems,
    fuzz_argument("extended_knn", knn_args, "verbose", bad_flags, n = n_base),
    fuzz_argument("extended_knn", knn_args, "metric", list(bad = "hamming", na = NA_character_,
                                                           num = 1, null = NULL), n = n_base),
    fuzz_argument("extended_knn", knn_args, "nn_kind", list(bad = "fast", na = NA, two = c("exact", "approx")),
                  n = n_base))
  approx_args <- list(X = X, n_neighbors = 5, n_extra = 3, nn_kind = "approx")
  problems <- c(problems, fuzz_argument("extended_knn", approx_args, "nn_args",
    list(list = list(n_trees = 2), junk = "x", null = NULL, num = 3), n = n_base))
  for (arg in c("n_trees", "leaf_size", "max_candidates", "n_iters", "delta", "target_recall")) {
    f <- lsnn_fun("approx_control")
    for (v in names(bad_numbers)) {
      a <- list()
      if (is.null(bad_numbers[[v]])) a[arg] <- list(NULL) else a[[arg]] <- bad_numbers[[v]]
      problems <- c(problems, fuzz_case(
        sprintf("extended_knn(nn_args = approx_control(%s = <%s>))", arg, v),
        function() extended_knn(X, 5, 3, nn_kind = "approx", nn_args = do.call(f, a)),
        n = n_base, check = knn_check))
    }
  }
  ls_args <- list(X = X, n_neighbors = 5, n_extra = 10, nn_kind = "exact")
  for (arg in c("n_neighbors", "n_extra", "scale_from", "scale_to", "n_threads")) {
    problems <- c(problems, fuzz_argument("locally_scaled_knn", ls_args, arg, bad_numbers,
                                          n = n_base))
  }
  problems <- c(problems, fuzz_argument("locally_scaled_knn", ls_args, "ret_knn", bad_flags,
                                        n = n_base))
  for (arg in c("perplexity", "n_threads")) {
    problems <- c(problems, fuzz_argument("perplexity_affinities", list(X = X, perplexity = 5),
                                          arg, bad_numbers))
  }
  problems <- c(problems, fuzz_argument("perplexity_affinities", list(X = X, perplexity = 5),
                                        "ret_extra", bad_flags))
  for (arg in c("spread", "min_dist")) {
    problems <- c(problems, fuzz_argument("umap_ab", list(), arg, c(bad_numbers, list(
      three = 3, small = 1e-8, large = 1e8)),
      check = function(ab) (all(ab > 0) && all(is.finite(ab))) || "a or b not positive"))
  }
  expect_fuzz_clean(problems)
})

test_that("embedding parameters out of range give an error or a finite embedding", {
  X <- X0
  base <- list(X = X, method = "tsne", perplexity = 5, max_iter = 30)
  args <- c("perplexity", "n_neighbors", "n_components", "max_iter", "eta", "exaggeration",
            "stop_lying_iter", "momentum", "final_momentum", "mom_switch_iter", "min_gain",
            "tol", "epoch", "init_sdev", "gamma", "alpha", "n_threads")
  if (!fuzz_long) args <- c("n_components", "max_iter", "eta", "exaggeration",
                            "stop_lying_iter", "epoch", "init_sdev", "n_threads")
  problems <- character()
  numbers <- bad_numbers
  # values that would make a valid call run for long are left to the long run
  if (!fuzz_long) numbers <- numbers[setdiff(names(numbers), c("huge", "int_max"))]
  for (arg in args) {
    vals <- numbers
    if (arg %in% c("max_iter", "n_components", "epoch", "n_threads", "stop_lying_iter",
                   "mom_switch_iter", "perplexity", "n_neighbors")) {
      vals <- vals[setdiff(names(vals), c("huge", "int_max", "big_double"))]
    }
    problems <- c(problems, fuzz_argument("neighbor_embedding", base, arg, vals, n = n_base))
  }
  problems <- c(problems,
    fuzz_argument("neighbor_embedding", base, "method", list(bad = "pca", na = NA, null = NULL, num = 1),
                  n = n_base),
    fuzz_argument("neighbor_embedding", base, "init", list(bad = "magic", na = NA, wrong_shape = matrix(0, 3, 2),
                                                 nan = matrix(NaN, n_base, 2),
                                                 huge = matrix(1e300, n_base, 2),
                                                 ok = matrix(rnorm(2 * n_base), n_base)),
                  n = n_base),
    fuzz_argument("neighbor_embedding", base, "verbose", bad_flags, n = n_base),
    fuzz_argument("neighbor_embedding", base, "ret_extra", bad_flags, n = n_base))
  umap_base <- list(X = X, method = "umap", n_neighbors = 5, max_iter = 30)
  for (arg in c("spread", "min_dist", "a", "b")) {
    problems <- c(problems, fuzz_argument("neighbor_embedding", umap_base, arg,
                                          numbers[setdiff(names(numbers), "null")], n = n_base))
  }
  expect_fuzz_clean(problems)
})

test_that("neighbour counts, sample sizes and data of the other functions give an error or a valid result", {
  X <- X0
  Y <- X0[, 1:2]
  quality <- list(X = X, Y = Y)
  problems <- c(
    fuzz_argument("umap_affinities", list(X = X), "n_neighbors", bad_numbers),
    fuzz_argument("neighbor_embedding", list(X = X, method = "umap", max_iter = 5),
                  "n_neighbors", bad_numbers, n = n_base),
    fuzz_argument("neighbor_preservation", quality, "k", bad_numbers),
    fuzz_argument("trustworthiness", quality, "n_points", bad_numbers),
    fuzz_argument("continuity", quality, "k", bad_numbers),
    fuzz_argument("random_triplet_accuracy", quality, "n_triplets", bad_numbers),
    fuzz_argument("distance_correlation", quality, "n_pairs", bad_numbers),
    fuzz_argument("embedding_quality", quality, "metric", list(bad = "hamming", na = NA, num = 1)),
    fuzz_argument("embedding_quality", list(Y = Y), "X", bad_data()),
    fuzz_argument("embedding_quality", list(X = X), "Y", bad_data())
  )
  expect_fuzz_clean(problems)
})

# ---- graphs ----

bad_graphs <- function(g) {
  n <- nrow(g$idx)
  m <- function(f) { h <- g; f(h) }
  list(
    ok = g,
    idx_zero = m(function(h) { h$idx[3, 2] <- 0L; h }),
    idx_too_big = m(function(h) { h$idx[3, 2] <- n + 1L; h }),
    idx_huge = m(function(h) { h$idx <- h$idx + 0; h$idx[3, 2] <- 1e9; h }),
    idx_na = m(function(h) { h$idx[3, 2] <- NA; h }),
    idx_fraction = m(function(h) { h$idx <- h$idx + 0; h$idx[3, 2] <- 2.5; h }),
    idx_negative = m(function(h) { h$idx[3, 2] <- -4L; h }),
    idx_character = m(function(h) { storage.mode(h$idx) <- "character"; h }),
    idx_not_self_first = m(function(h) { h$idx[, 1:2] <- h$idx[, 2:1]; h }),
    idx_duplicates = m(function(h) { h$idx[, 3] <- h$idx[, 2]; h }),
    dist_negative = m(function(h) { h$dist[3, 2] <- -1; h }),
    dist_nan = m(function(h) { h$dist[3, 2] <- NaN; h }),
    dist_na = m(function(h) { h$dist[3, 2] <- NA; h }),
    dist_inf = m(function(h) { h$dist[3, 2] <- Inf; h }),
    dist_huge = m(function(h) { h$dist <- h$dist * 1e300; h }),
    dist_tiny = m(function(h) { h$dist <- h$dist * 1e-300; h }),
    dist_zero = m(function(h) { h$dist[] <- 0; h }),
    dist_unsorted = m(function(h) { h$dist[, -1] <- h$dist[, rev(seq_len(ncol(h$dist)))[-ncol(h$dist)]]; h }),
    dist_character = m(function(h) { storage.mode(h$dist) <- "character"; h }),
    shapes_differ = m(function(h) { h$dist <- h$dist[, -1]; h }),
    one_column = m(function(h) { h$idx <- h$idx[, 1, drop = FALSE]; h$dist <- h$dist[, 1, drop = FALSE]; h }),
    two_columns = m(function(h) { h$idx <- h$idx[, 1:2]; h$dist <- h$dist[, 1:2]; h }),
    zero_rows = m(function(h) { h$idx <- h$idx[0, ]; h$dist <- h$dist[0, ]; h }),
    one_row = m(function(h) { h$idx <- h$idx[1, , drop = FALSE]; h$dist <- h$dist[1, , drop = FALSE]; h }),
    no_dist = list(idx = g$idx),
    vectors = list(idx = g$idx[, 2], dist = g$dist[, 2]),
    data_frame = list(idx = as.data.frame(g$idx), dist = as.data.frame(g$dist)),
    not_a_list = g$idx,
    null = NULL,
    empty_list = list()
  )
}

test_that("functions taking graphs answer malformed graphs with an error or a valid result", {
  g <- extended_knn(X0, 10, 10, nn_kind = "exact")
  graphs <- bad_graphs(g)
  problems <- c(
    fuzz_argument("umap_affinities", list(), "nn_method", graphs),
    fuzz_argument("perplexity_affinities", list(perplexity = 3), "nn_method", graphs),
    fuzz_argument("enn_to_lsnn", list(n_neighbors = 5, n_extra = 15), "enn", graphs),
    fuzz_argument("sort_knn_graph", list(), "knn_graph", graphs),
    fuzz_argument("truncate_graph", list(k = 5), "graph", graphs),
    fuzz_argument("neighbor_overlap", list(g2 = g), "g1", graphs),
    fuzz_argument("neighbor_embedding", list(method = "umap", max_iter = 20), "nn_method", graphs)
  )
  for (nm in names(graphs)[vapply(graphs, is.list, logical(1))]) {
    h <- graphs[[nm]]
    problems <- c(problems, fuzz_case(sprintf("locally_scaled_distances(<%s>)", nm),
                                      function() locally_scaled_distances(h$idx, h$dist)))
  }
  for (arg in c("n_neighbors", "scale_from", "scale_to", "n_extra")) {
    problems <- c(problems, fuzz_argument("enn_to_lsnn", list(enn = g, n_neighbors = 5), arg,
                                          bad_numbers, n = n_base))
  }
  for (arg in c("scale_from", "scale_to")) {
    problems <- c(problems, fuzz_argument("locally_scaled_distances",
                                          list(idx = g$idx, dist = g$dist), arg, bad_numbers))
  }
  for (arg in c("local_connectivity", "bandwidth", "set_op_mix_ratio", "n_threads")) {
    problems <- c(problems, fuzz_argument("umap_affinities", list(nn_method = g), arg, bad_numbers))
  }
  problems <- c(problems,
    fuzz_argument("truncate_graph", list(graph = g), "k", bad_numbers, n = n_base),
    fuzz_argument("neighbor_overlap", list(g1 = g, g2 = g), "k", bad_numbers),
    fuzz_argument("sort_knn_graph", list(knn_graph = g), "sort_values",
                  list(nan = matrix(NaN, n_base, ncol(g$idx)), wrong = matrix(0, 2, 2),
                       character = matrix("a", n_base, ncol(g$idx)),
                       ok = matrix(runif(n_base * ncol(g$idx)), n_base))),
    fuzz_argument("sort_knn_graph", list(knn_graph = g), "decreasing", bad_flags))
  expect_fuzz_clean(problems)
})

test_that("cost_gradient() answers bad coordinates and affinities with an error or finite values", {
  P <- perplexity_affinities(X0, 5)
  Y <- matrix(rnorm(2 * n_base), n_base)
  Pd <- as.matrix(P)
  finite_result <- function(r) {
    (is.finite(r$cost) && all(is.finite(r$gradient))) || "cost or gradient not finite"
  }
  problems <- c(
    fuzz_argument("cost_gradient", list(P = P), "Y", list(
      ok = Y, na = replace(Y, 3, NA), nan = replace(Y, 3, NaN), inf = replace(Y, 3, Inf),
      huge = Y * 1e200, big = Y * 1e100, tiny = Y * 1e-200, zeros = Y * 0,
      rows_wrong = Y[-1, ], cols0 = Y[, 0], cols3 = cbind(Y, 1), character = matrix("a", n_base, 2),
      vector = Y[, 1], null = NULL, df = as.data.frame(Y), list = list(Y))
    , check = finite_result),
    fuzz_argument("cost_gradient", list(Y = Y), "P", list(
      ok = P, dense = Pd, negative = -P, nan = local({ Q <- P; Q@x[1] <- NaN; Q }),
      inf = local({ Q <- P; Q@x[1] <- Inf; Q }), asymmetric = Matrix::Matrix(upper.tri(Pd) * Pd, sparse = TRUE),
      wrong_size = P[-1, -1], zeros = P * 0, huge = P * 1e300, character = "P",
      dgt = methods::as(P, "TsparseMatrix"), null = NULL), check = finite_result))
  for (method in c("tsne", "largevis", "umap")) {
    for (arg in c("gamma", "eps", "a", "b", "alpha")) {
      problems <- c(problems, fuzz_argument("cost_gradient", list(Y = Y, P = P, method = method),
                                            arg, bad_numbers, check = finite_result))
    }
  }
  problems <- c(problems, fuzz_argument("cost_gradient", list(Y = Y, P = P), "method",
                                        list(bad = "pca", na = NA, num = 2)))
  expect_fuzz_clean(problems)
})

# ---- files and generators ----

write_idx <- function(path, bytes, gz = FALSE) {
  con <- if (gz) gzfile(path, "wb") else file(path, "wb")
  writeBin(as.raw(bytes), con)
  close(con)
  path
}

idx_header <- function(type, dims) {
  c(0, 0, type, length(dims),
    unlist(lapply(dims, function(d) as.integer(rev(as.raw(writeBin(as.integer(d), raw(), size = 4)))))))
}

test_that("read_idx() answers truncated, corrupt and random files with an error or their data", {
  dir <- tempfile("fuzz-idx")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  good <- c(idx_header(0x08, c(3, 2, 2)), 1:12)
  files <- list(
    good = write_idx(file.path(dir, "good"), good),
    good_gz = write_idx(file.path(dir, "good.gz"), good, gz = TRUE),
    empty = write_idx(file.path(dir, "empty"), integer(0)),
    magic_only = write_idx(file.path(dir, "magic"), c(0, 0, 8)),
    header_truncated = write_idx(file.path(dir, "htrunc"), good[1:9]),
    data_truncated = write_idx(file.path(dir, "dtrunc"), good[1:20]),
    data_truncated_gz = write_idx(file.path(dir, "dtrunc.gz"), good[1:20], gz = TRUE),
    bad_magic = write_idx(file.path(dir, "badmagic"), c(1, 2, 8, 1, 0, 0, 0, 1, 5)),
    bad_type = write_idx(file.path(dir, "badtype"), c(idx_header(0x07, 2), 1, 2)),
    zero_dims = write_idx(file.path(dir, "zerodims"), c(0, 0, 8, 0)),
    many_dims = write_idx(file.path(dir, "manydims"), c(0, 0, 8, 255, rep(0, 20))),
    zero_items = write_idx(file.path(dir, "zeroitems"), idx_header(0x08, c(0, 2))),
    huge_dims = write_idx(file.path(dir, "hugedims"), c(idx_header(0x08, c(2147483647, 2147483647)), 1:10)),
    negative_dim = write_idx(file.path(dir, "negdim"), c(0, 0, 8, 1, 0xff, 0xff, 0xff, 0xff, 1, 2)),
    float_nan = write_idx(file.path(dir, "floatnan"), c(idx_header(0x0D, 2), 0x7f, 0xc0, 0, 0, 0, 0, 0, 0)),
    double_short = write_idx(file.path(dir, "doubleshort"), c(idx_header(0x0E, 2), 1:9)),
    corrupt_gz = write_idx(file.path(dir, "corrupt.gz"), c(0x1f, 0x8b, 8, 0, 1:30)),
    missing = file.path(dir, "does-not-exist"),
    directory = dir
  )
  set.seed(99)
  n_random <- if (fuzz_long) 200 else 20
  for (r in seq_len(n_random)) {
    bytes <- sample(0:255, sample(0:64, 1), TRUE)
    if (r %% 2 == 0 && length(bytes) >= 4) bytes[1:4] <- c(0, 0, sample(c(8, 9, 11:14), 1), sample(1:3, 1))
    files[[paste0("random", r)]] <- write_idx(file.path(dir, paste0("random", r)), bytes,
                                              gz = r %% 3 == 0)
  }
  problems <- character()
  for (nm in names(files)) {
    path <- files[[nm]]
    # float files may hold NaN as data: only their shape is checked
    check <- function(v) {
      if (is.null(v) || is.numeric(v)) TRUE else "not numeric"
    }
    r <- fuzz_run(function() read_idx(path))
    problems <- c(problems, internal_messages(r, paste0("read_idx(<", nm, ">)")))
    if (!is.null(r$error) && grepl("elapsed time limit", conditionMessage(r$error))) {
      problems <- c(problems, paste0("read_idx(<", nm, ">): hangs"))
    } else if (is.null(r$error) && !isTRUE(check(r$value))) {
      problems <- c(problems, paste0("read_idx(<", nm, ">): ", check(r$value)))
    }
    for (v in c("n", "flatten")) {
      vals <- if (v == "n") bad_numbers else bad_flags
      for (b in names(vals)) {
        a <- list(path = path)
        if (is.null(vals[[b]])) a[v] <- list(NULL) else a[[v]] <- vals[[b]]
        r <- fuzz_run(function() do.call(read_idx, a))
        problems <- c(problems, internal_messages(r, sprintf("read_idx(<%s>, %s = <%s>)", nm, v, b)))
        if (!is.null(r$error) && grepl("elapsed time limit", conditionMessage(r$error))) {
          problems <- c(problems, sprintf("read_idx(<%s>, %s = <%s>): hangs", nm, v, b))
        }
      }
    }
  }
  expect_equal(dim(read_idx(files$good)), c(3L, 4L))
  expect_fuzz_clean(problems)
})

test_that("data generators and helpers answer bad arguments with an error or valid data", {
  problems <- character()
  small <- bad_numbers[setdiff(names(bad_numbers), c("huge", "int_max", "big_double"))]
  finite_data <- function(v) {
    X <- if (is.list(v) && !is.data.frame(v)) v[[1]] else v
    if (is.data.frame(X)) X <- X[vapply(X, is.numeric, logical(1))]
    all(is.finite(as.matrix(X))) || "data not finite"
  }
  for (fname in c("scurvehole", "swissroll")) {
    problems <- c(problems,
      fuzz_argument(fname, list(noise = 0.1), "n", small, check = finite_data),
      fuzz_argument(fname, list(n = 50), "noise", small, check = finite_data))
  }
  sph <- list(n_spheres = 2, n_per_sphere = 10, dim = 5)
  for (arg in names(sph)) {
    problems <- c(problems, fuzz_argument("spheres", sph, arg, small, check = finite_data))
  }
  hier <- list(n_per_cluster = 3, dim = 4, n_macro = 2)
  for (arg in names(hier)) {
    problems <- c(problems, fuzz_argument("hierarchical", hier, arg, small, check = finite_data))
  }
  for (p in list(NA, 1, "", tempfile("no-such-dir"), c("a", "b"))) {
    problems <- c(problems,
      fuzz_case("has_fashion_mnist(<bad path>)", function() has_fashion_mnist(p),
                check = function(v) (is.logical(v) && length(v) == 1 && !is.na(v)) || "not TRUE/FALSE"),
      fuzz_case("fashion_mnist(<bad path>)", function() fashion_mnist(p, n = 5)))
  }
  old <- options(lsnn.simd = "generic")
  on.exit(options(old))
  problems <- c(problems, fuzz_case("simd_kernels()", simd_kernels))
  for (v in list("avx512", NA, 1, c("auto", "generic"))) {
    options(lsnn.simd = v)
    problems <- c(problems, fuzz_case("extended_knn() under a bad lsnn.simd option",
                                      function() extended_knn(X0, 5, 0, nn_kind = "exact")))
  }
  expect_fuzz_clean(problems)
})

test_that("every exported function is fuzzed; new ones get the generic bad inputs", {
  covered <- c("approx_control", "cost_gradient", "embed", "neighbor_embedding", "enn_to_lsnn",
               "extended_knn", "fashion_mnist", "has_fashion_mnist", "hierarchical",
               "locally_scaled_distances", "locally_scaled_knn", "neighbor_overlap",
               "perplexity_affinities", "read_idx", "scurvehole", "simd_kernels",
               "sort_knn_graph", "spheres", "swissroll", "truncate_graph", "umap_ab",
               "umap_affinities", "neighbor_preservation", "trustworthiness", "continuity",
               "random_triplet_accuracy", "distance_correlation", "embedding_quality")
  exports <- sort(getNamespaceExports("lsnn"))
  exports <- exports[vapply(exports, function(e) is.function(lsnn_fun(e)), logical(1))]
  others <- setdiff(exports, covered)
  generic <- list(null = NULL, na = NA, character = "a", nan_matrix = matrix(NaN, 3, 2),
                  empty = matrix(numeric(0), 0, 2), list = list(1, "a"))
  problems <- character()
  for (fname in others) {
    f <- lsnn_fun(fname)
    if (length(formals(f)) == 0) next
    for (v in names(generic)) {
      problems <- c(problems, fuzz_case(sprintf("%s(<%s>)", fname, v),
                                        function() if (is.null(generic[[v]])) f(NULL) else f(generic[[v]])))
    }
  }
  expect_fuzz_clean(problems)
  expect_true(length(intersect(exports, covered)) >= 20)
})

test_that("random problems at random scales: exact neighbours, valid approximate ones", {
  set.seed(31)
  n_problems <- if (fuzz_long) 150 else 15
  problems <- character()
  for (t in seq_len(n_problems)) {
    n <- sample(c(2:12, 50, 200, 333), 1)
    d <- sample(c(1:5, 17, 40), 1)
    e <- sample(c(0, runif(1, -300, 300)), 1)
    X <- matrix(rnorm(n * d), n) * 10^e
    if (n > 4 && runif(1) < 0.3) X[sample(n, n %/% 3), ] <- X[rep(1, n %/% 3), ]
    if (runif(1) < 0.2) X <- round(X / 10^e) * 10^e  # many ties
    metric <- sample(c("euclidean", "manhattan"), 1)
    k <- sample(seq_len(n), 1)
    label <- sprintf("problem %d (n = %d, d = %d, scale 1e%.0f, %s, k = %d)", t, n, d, e,
                     metric, k)
    D <- as.matrix(stats::dist(X / 10^e, method = metric)) * 10^e
    kk <- min(k, n - 1) + 1  # extended_knn() counts the row itself on top of n_neighbors
    truth <- t(apply(D, 1, sort))[, seq_len(kk), drop = FALSE]
    if (kk == 1) truth <- matrix(truth, ncol = 1)
    exact_ok <- function(g) {
      if (!all(dim(g$dist) == c(n, kk))) return("wrong shape")
      if (any(abs(g$dist - truth) > 1e-9 * pmax(truth, max(D) * 1e-300))) return("not the exact distances")
      found <- D[cbind(rep(seq_len(n), kk), as.vector(g$idx))]
      if (any(abs(found - as.vector(g$dist)) > 1e-9 * pmax(found, 1e-300))) return("idx and dist disagree")
      TRUE
    }
    problems <- c(problems,
      fuzz_case(paste(label, "exact"), function() extended_knn(X, k, 0, nn_kind = "exact",
                                                              metric = metric),
                n = n, check = exact_ok),
      fuzz_case(paste(label, "approx"), function() extended_knn(X, k, 0, nn_kind = "approx",
                                                               metric = metric),
                n = n, check = knn_check))
  }
  expect_fuzz_clean(problems)
})

test_that("the fuzz suite ran its cases", {
  expect_gt(fuzz_cases_run, if (fuzz_long) 2000 else if (full_tier()) 1000 else 400)
})
