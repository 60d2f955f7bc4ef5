#' Place new points in an existing embedding
#'
#' Embeds the rows of `X_new` in the embedding that [neighbor_embedding()]
#' made with `ret_model = TRUE`, without moving the points already there.
#' Each new row gets affinities to the reference rows from its own
#' neighbours among them (the model's kind: nearest or locally scaled
#' neighbours), starts at the affinity-weighted mean of those neighbours'
#' coordinates, and is then moved to lower its own cost under the model's
#' cost (t-SNE, LargeVis, UMAP, t-UMAP, PaCMAP or LocalMAP) against the
#' fixed reference points. New points do not repel each other. A model fitted with `pca`
#' first projects the new rows through its centre and rotation
#' (`model$pca`), as the reference rows were.
#'
#' **Affinities.** t-SNE and LargeVis: the perplexity-calibrated conditional
#' probabilities of the row's `3 * perplexity` nearest reference rows,
#' scaled to sum to `1 / n` (a reference row's share of the symmetric P);
#' t-SNE normalises each new point's output similarities over the reference
#' alone. UMAP and t-UMAP: the row's fuzzy memberships over its
#' `n_neighbors` nearest reference rows, as in `uwot::umap_transform()`.
#'
#' **PaCMAP and LocalMAP.** Each new row's near pairs are its
#' locally scaled neighbours among the reference rows, its further pairs
#' random other reference rows (as many as a reference row has). It starts
#' at the mean of its near partners and moves by Adam (100 iterations, a
#' tenth of the model's learning rate) under the weights of the last phase.
#'
#' **Optimisation.** The model's own way: gradient descent against the
#' repulsion of the reference (exact up to 1,000 reference points or beyond
#' 2 dimensions, else by the grid of [cost_gradient()]'s `"approx"`, laid
#' over the reference once, so that each iteration costs O(new points)); or,
#' for a model laid out by negative sampling, negative sampling with
#' reference points as the only negative samples. Results are reproducible
#' with [set.seed()] and do not depend on `n_threads`; Ctrl-C stops the run.
#'
#' @param X_new The new data: a numeric matrix or data frame with the
#'   columns of the data the model was fitted on. May be `NULL` when
#'   `nn_method` is given.
#' @param model What `neighbor_embedding(..., ret_model = TRUE)` returned
#'   (with or without `ret_extra`), or its `model` element alone, as
#'   `uwot::umap_transform()` takes the model of `uwot::umap(ret_model =
#'   TRUE)`. It is checked whole (every element, its type and dimensions,
#'   and its index) and a damaged model is refused with an error naming the
#'   element.
#' @param nn_method Optional neighbours of the new rows among the reference
#'   rows: `list(idx, dist)`, `nrow(X_new) x k` matrices, `idx` holding
#'   reference row numbers (no self column, each once per row), distances
#'   increasing; for example from [extended_knn_query()] or
#'   [locally_scaled_knn_query()]. The other forms of [extended_knn()]'s
#'   "Graphs from other packages" are read too: BiocNeighbors'
#'   `list(index, distance)` (taken as it is, no self column added), uwot's
#'   nested form, and a sparse `n_ref x nrow(X_new)` distance matrix whose
#'   column j holds new row j's distances to its reference rows (as
#'   `uwot::umap_transform()` takes it). Needed when the model was fitted on
#'   a graph without data.
#' @param max_iter Iterations (epochs for a sampled model); `NULL` for 250
#'   (100 epochs).
#' @param eta Step size (the initial learning rate for a sampled model);
#'   `NULL` for twice the model's step size after its exaggeration (a
#'   quarter of its learning rate for a sampled model).
#' @param n_threads Number of threads; `NULL` (the default) for
#'   [default_n_threads()].
#' @param verbose If `TRUE`, report the steps and the cost.
#' @param callback `NULL`, or a function called every `epoch` iterations
#'   with the iteration and the new points' coordinates so far (an
#'   `nrow(X_new) x n_components` matrix with the row names of `X_new`), as
#'   in [neighbor_embedding()]: returning `FALSE` stops the run there.
#' @param epoch Iterations (epochs for a sampled model) between two calls of
#'   `callback`.
#' @param seed `NULL` (the default) to draw random numbers from R's generator, so
#'   that [set.seed()] makes the result reproducible; or a whole number: the
#'   result then depends on it alone, and R's generator is left as it was.
#' @return An `nrow(X_new) x n_components` matrix of coordinates (row names
#'   of `X_new` kept), with attributes `cost`, the cost history of the new
#'   points (named by iteration), and `iterations`, the iterations done.
#' @seealso [neighbor_embedding()]
#' @examples
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' train <- seq(1, nrow(X), by = 2)
#' set.seed(1)
#' fit <- neighbor_embedding(X[train, ], "umap", ret_model = TRUE, max_iter = 200)
#' Y_new <- neighbor_embedding_transform(X[-train, ], fit)
#' plot(fit$embedding, col = "grey")
#' points(Y_new, col = "red")
#' @export
neighbor_embedding_transform <- function(X_new = NULL, model, nn_method = NULL,
                                         max_iter = NULL, eta = NULL, n_threads = NULL,
                                         verbose = FALSE, seed = NULL, callback = NULL,
                                         epoch = 10) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
  if (missing(model)) stop_arg("'model' is missing: ", model_remedy)
  model <- check_model(model)
  n_threads <- check_n_threads(n_threads)
  verbose <- check_flag(verbose, "verbose")
  callback <- check_callback(callback)
  epoch <- check_whole(epoch, "epoch", min = 1)
  if (!is.null(max_iter)) max_iter <- check_whole(max_iter, "max_iter", min = 0)
  if (!is.null(eta)) eta <- check_number(eta, "eta", min = 0, above = TRUE)
  # (the call's one seed: each random step derives its own, R/seeds.R)
  call_seed <- draw_seed()
  Y_ref <- model$embedding
  n_ref <- nrow(Y_ref)
  new_data <- if (!is.null(X_new)) prepare_new_rows(model, X_new)
  row_names <- if (!is.null(X_new)) rownames(X_new)
  if (!is.null(nn_method)) {
    nn_method <- check_graph(nn_method, "nn_method", self_first = FALSE, sorted = TRUE,
                             n_ref = n_ref)
    if (!is.null(new_data) && nrow(nn_method$idx) != new_data$n) {
      stop_arg("'nn_method' has ", nrow(nn_method$idx), " rows but 'X_new' has ", new_data$n)
    }
  } else {
    if (is.null(X_new)) stop_arg("give the new data as 'X_new' or their neighbours as 'nn_method'")
    if (is.null(model$index)) {
      stop_arg("'model' was fitted on a neighbour graph without data: give the new rows' ",
               "neighbours among the reference rows as 'nn_method'")
    }
  }
  if (model$method %in% c("pacmap", "localmap")) {
    Y <- pacmap_transform(model, if (!is.null(new_data)) dense_or_rows(new_data), nn_method,
                          max_iter, eta, n_threads, verbose, callback, epoch, row_names,
                          call_seed)
    dimnames(Y) <- list(row_names, colnames(Y_ref))
    return(Y)
  }
  Y <- place_affinity_points(model, new_data, nn_method, max_iter, eta, n_threads, verbose,
                             callback, epoch, row_names, call_seed)
  dimnames(Y) <- list(row_names, colnames(Y_ref))
  Y
}

# neighbor_embedding_transform() for t-SNE, LargeVis, UMAP and t-UMAP: the
# new rows' neighbours among the reference rows (given, or queried), their
# affinities, a start at the weighted mean of their neighbours, and the
# placement with the reference held fixed. `seed`: the call's (R/seeds.R).
place_affinity_points <- function(model, new_data, nn_method, max_iter, eta, n_threads, verbose,
                                  callback, epoch, row_names, seed) {
  Y_ref <- model$embedding
  n_ref <- nrow(Y_ref)
  graph <- if (!is.null(nn_method)) nn_method else {
    ne_msg(verbose, "neighbor_embedding_transform: ", model$neighbors, " neighbours of ",
           new_data$n, " new rows")
    model_query(model, new_data, n_threads, verbose, step_seed(seed, "query"))
  }
  m <- nrow(graph$idx)
  tsne_like <- model$method %in% c("tsne", "largevis")
  ne_msg(verbose, "neighbor_embedding_transform: affinities")
  aff <- .query_affinities(graph$idx, graph$dist, n_ref,
                           if (tsne_like) "perplexity" else "umap",
                           if (tsne_like) min(model$perplexity, ncol(graph$idx) - 1) else 0,
                           n_threads, simd_option(), verbose)
  # t-SNE and LargeVis: a reference row's share of the symmetric P
  x <- if (tsne_like) aff$x / n_ref else aff$x
  # start: each new point at the affinity-weighted mean of its neighbours
  P <- Matrix::sparseMatrix(p = aff$p, j = aff$i + 1L, x = x, dims = c(m, n_ref))
  Y0 <- as.matrix(P %*% Y_ref) / pmax(Matrix::rowSums(P), .Machine$double.xmin)

  sampled <- identical(model$gradient, "sampled")
  if (is.null(max_iter)) max_iter <- if (sampled) 100L else 250L
  # the reference's own step (after any exaggeration), for a gradient of half
  # its size (each new pair counts once); a quarter of its learning rate
  # for negative sampling, as uwot's transform
  if (is.null(eta)) eta <- if (sampled) model$eta / 4 else 2 * model$eta
  # (the momentum switches early: the new points start near their place)
  layout <- if (sampled) {
    ne_layout_settings("sampled", max_iter, if (verbose) 10L else 0L, eta, callback, epoch,
                       row_names, negative_sample_rate = model$negative_sample_rate,
                       gamma = model$sample_gamma, seed = step_seed(seed, "layout"))
  } else {
    ne_layout_settings("gradient_descent", max_iter, 50L, eta, callback, epoch, row_names,
                       mom_switch_iter = 50L)
  }
  # the grid's field of the reference is computed once, so it pays off much
  # earlier than in the embedding itself (where each iteration rebuilds it)
  approx <- ncol(Y_ref) <= 2 && n_ref > 1000
  cost <- ne_cost_list(model$cost, if (approx) "approx" else "exact")
  ne_msg(verbose, "neighbor_embedding_transform: placing ", m, " points (",
         if (sampled) "negative sampling" else "gradient descent", ")")
  res <- .place_points(Y_ref, Y0, aff$p, aff$i, x, cost, layout, n_threads, verbose,
                       simd_option())
  Y <- res$Y
  attr(Y, "cost") <- res$cost
  attr(Y, "iterations") <- res$iterations
  Y
}

# The neighbours of each new row among the reference rows: as many as a
# reference row has besides itself (t-SNE, LargeVis: 3 perplexity), or, for
# UMAP as in uwot, n_neighbors (a reference row's count with itself).
ne_query_k <- function(method, n_ref, perplexity, n_neighbors) {
  if (method %in% c("tsne", "largevis")) {
    as.integer(min(n_ref - 1, ceiling(3 * perplexity)))
  } else {
    as.integer(min(n_ref, n_neighbors))
  }
}

# X_new checked as the data the model was fitted on: with the index's
# columns and metric, in the index's form; for a model with a PCA
# projection, with the columns it projects, and projected.
prepare_new_rows <- function(model, X_new) {
  if (is_graph_like(X_new)) {
    stop_arg("'X_new' is a neighbour graph: pass it as 'nn_method'")
  }
  if (!is.null(model$pca)) {
    return(pca_new_rows(model$pca, X_new, "euclidean", "X_new", "the model was fitted on"))
  }
  if (is.null(model$index)) return(prepare_data(X_new, "euclidean", "X_new", min_rows = 1))
  prepare_query(model$index, X_new, "X_new")
}

# The new rows' neighbours among the reference rows, by the model's index,
# with the query functions' default search (approximate, epsilon 0.02,
# locally scaled among 50 extra candidates), from `seed`.
model_query <- function(model, data, n_threads, verbose, seed) {
  k <- ne_query_k(model$method, nrow(model$embedding), model$perplexity, model$n_neighbors)
  if (model$neighbors == "lsnn") {
    n_searched <- as.integer(min(k + 50, nrow(model$embedding)))
    query_lsnn(model$index, data, k, n_searched, "approx", 0.02, n_threads, verbose, seed)
  } else {
    query_knn(model$index, data, k, "approx", 0.02, n_threads, verbose, seed)
  }
}

# The model that neighbor_embedding(ret_model = TRUE) returns: what placing
# new points needs (see neighbor_embedding_transform()).
ne_model <- function(method, cost, gradient, embedding, index, neighbors, perplexity,
                     n_neighbors, eta, negative_sample_rate, sample_gamma, pca = NULL) {
  structure(list(format_version = embedding_model_version, method = method, cost = cost,
                 gradient = gradient, embedding = embedding, index = index,
                 neighbors = neighbors, perplexity = perplexity, n_neighbors = n_neighbors,
                 eta = eta, negative_sample_rate = negative_sample_rate,
                 sample_gamma = sample_gamma, pca = pca),
            class = "lsnn_embedding_model")
}

embedding_model_version <- 1L

# What to pass as a model, for the messages that refuse one.
model_remedy <- paste0("pass what neighbor_embedding(..., ret_model = TRUE) returns (or its ",
                       "'model' element)")

# The model in what neighbor_embedding(ret_model = TRUE) returned: the
# model itself, or the list whose `model` element it is (any ret_extra).
# Anything else is refused with what to pass instead.
model_of <- function(x) {
  if (inherits(x, "lsnn_embedding_model")) return(x)
  if (is.list(x) && !is.data.frame(x) && inherits(x$model, "lsnn_embedding_model")) {
    return(x$model)
  }
  what <- if (is.list(x) && !is.data.frame(x) && !is.null(x$embedding)) {
    paste0("the result of neighbor_embedding() without a model (it was called without ",
           "ret_model = TRUE): call it again with ret_model = TRUE and pass that result")
  } else if (is.matrix(x) && is.numeric(x)) {
    paste0("a matrix (an embedding holds no model): call neighbor_embedding(..., ",
           "ret_model = TRUE) and pass what it returns (or its 'model' element)")
  } else if (inherits(x, "lsnn_index")) {
    paste0("an lsnn index (for extended_knn_query()), not an embedding model: ", model_remedy)
  } else {
    paste0(what_is(x), ", not an embedding model: ", model_remedy)
  }
  stop_arg("'model' is ", what)
}

#' @export
print.lsnn_embedding_model <- function(x, ...) {
  cat(sprintf("lsnn embedding model: %s, %d points in %d dimensions, %s neighbours%s\n",
              x$method, nrow(x$embedding), ncol(x$embedding), x$neighbors,
              if (is.null(x$index)) " (no data index: new points need 'nn_method')" else ""))
  invisible(x)
}

# The methods whose models place new points, with the cost settings each
# model stores (cost$method: the core's cost, see ne_cost_settings()).
ne_model_costs <- list(tsne = "tsne", largevis = c("largevis", "largevis_exp"), umap = "umap",
                       tumap = "umap", pacmap = "pacmap", localmap = "localmap")

# A model as neighbor_embedding_transform() reads it, checked whole once at
# entry in O(size): every element of ne_model() present, of its type and
# dimensions, the method known, its settings in range, and its index (when
# it has one) a valid index of one reference row per embedded point.
check_model <- function(model) {
  model <- model_of(model)
  remedy <- paste0("fit it again with neighbor_embedding(..., ret_model = TRUE) and pass ",
                   "what that returns")
  damaged <- function(...) {
    stop_arg("'model' is damaged or not an lsnn model: ", ..., "; ", remedy)
  }
  el <- function(x) paste0("'model$", x, "'")
  check_format_version(model$format_version, embedding_model_version, "model", damaged, remedy)
  method <- model$method
  if (!is_word(method, names(ne_model_costs))) {
    damaged(el("method"), " must be one of ",
            paste0('"', names(ne_model_costs), '"', collapse = ", "), " (it is ",
            what_is(method), ")")
  }
  pairs <- method %in% c("pacmap", "localmap")
  Y <- model$embedding
  if (!is.matrix(Y) || !is.numeric(Y) || nrow(Y) < 3 || ncol(Y) < 1) {
    damaged(el("embedding"), " must be a numeric matrix of at least 3 rows (it is ",
            what_is(Y), ")")
  }
  if (!all_finite(Y)) damaged(el("embedding"), " contains NA, NaN or infinite values")
  check_model_cost(model$cost, method, pairs, el, damaged)
  check_model_settings(model, method, pairs, el, damaged)
  check_model_index(model, remedy, el, damaged)
  model
}

# check_model()'s checks of the cost's settings.
check_model_cost <- function(cost, method, pairs, el, damaged) {
  if (!is.list(cost) || !is_word(cost$method, ne_model_costs[[method]])) {
    damaged(el("cost"), " must hold the settings of the ", method, " cost (its method ",
            paste0('"', ne_model_costs[[method]], '"', collapse = " or "), ")")
  }
  positive <- function(x) is_scalar_number(x, min = 0, above = TRUE)
  non_negative <- function(x) is_scalar_number(x, min = 0)
  if (pairs) {
    if (!positive(cost$low_dist_thres)) {
      damaged(el("cost$low_dist_thres"), " must be a positive number (it is ",
              what_is(cost$low_dist_thres), ")")
    }
  } else {
    for (s in c("gamma", "eps")) {
      if (!non_negative(cost[[s]])) {
        damaged(el(paste0("cost$", s)), " must be a number of at least 0 (it is ",
                what_is(cost[[s]]), ")")
      }
    }
    for (s in c("alpha", "a", "b")) {
      if (!positive(cost[[s]])) {
        damaged(el(paste0("cost$", s)), " must be a positive number (it is ",
                what_is(cost[[s]]), ")")
      }
    }
  }
  invisible()
}

# check_model()'s checks of the layout's settings.
check_model_settings <- function(model, method, pairs, el, damaged) {
  positive <- function(x) is_scalar_number(x, min = 0, above = TRUE)
  non_negative <- function(x) is_scalar_number(x, min = 0)
  gradients <- if (pairs) "pairs" else if (method == "tsne") c("exact", "approx") else
    c("exact", "approx", "sampled")
  if (!is_word(model$gradient, gradients)) {
    damaged(el("gradient"), " must be one of ", paste0('"', gradients, '"', collapse = ", "),
            " for ", method, " (it is ", what_is(model$gradient), ")")
  }
  neighbors <- if (pairs) "lsnn" else c("knn", "lsnn")
  if (!is_word(model$neighbors, neighbors)) {
    damaged(el("neighbors"), " must be one of ", paste0('"', neighbors, '"', collapse = ", "),
            " (it is ", what_is(model$neighbors), ")")
  }
  if (!is_scalar_number(model$n_neighbors, min = if (pairs) 1 else 2, max = big_int,
                        whole = TRUE)) {
    damaged(el("n_neighbors"), " must be a whole number of at least ", if (pairs) 1 else 2,
            " (it is ", what_is(model$n_neighbors), ")")
  }
  if (!pairs && model$n_neighbors > nrow(model$embedding)) {
    damaged(el("n_neighbors"), " (", model$n_neighbors, ") is more than the ",
            nrow(model$embedding), " reference points")
  }
  if (!positive(model$eta)) {
    damaged(el("eta"), " must be a positive number (it is ", what_is(model$eta), ")")
  }
  if (!is_scalar_number(model$negative_sample_rate, min = if (pairs) 0 else 1, max = big_int,
                        whole = TRUE)) {
    damaged(el("negative_sample_rate"), " must be a whole number of at least ",
            if (pairs) 0 else 1, " (it is ", what_is(model$negative_sample_rate), ")")
  }
  if (!pairs) {
    if (!is_scalar_number(model$perplexity, min = 1, above = TRUE)) {
      damaged(el("perplexity"), " must be a number greater than 1 (it is ",
              what_is(model$perplexity), ")")
    }
    if (!non_negative(model$sample_gamma)) {
      damaged(el("sample_gamma"), " must be a number of at least 0 (it is ",
              what_is(model$sample_gamma), ")")
    }
  }
  invisible()
}

# check_model()'s checks of the principal components and the index that
# place new rows.
check_model_index <- function(model, remedy, el, damaged) {
  Y <- model$embedding
  pca <- model$pca
  if (!is.null(pca)) validate_pca(pca, NULL, "model$pca", damaged)
  index <- model$index
  if (!is.null(index)) {
    if (!inherits(index, "lsnn_index")) damaged(el("index"), " must be an lsnn index or NULL")
    validate_index(index, "model$index", damaged, remedy)
    if (nrow(index$data) != nrow(Y)) {
      damaged(el("embedding"), " has ", nrow(Y), " rows but ", el("index"), " holds ",
              nrow(index$data), " reference rows: one row per reference row")
    }
    if (model$neighbors == "lsnn" && is.null(index$sigma)) {
      damaged(el("index"), " holds no local scales, which locally scaled neighbours need")
    }
    if (!is.null(pca) && ncol(index$data) != ncol(pca$rotation)) {
      damaged(el("pca$rotation"), " has ", ncol(pca$rotation), " columns but the index's ",
              "data has ", ncol(index$data))
    }
  }
  invisible()
}
