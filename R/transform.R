#' Place new points in an existing embedding
#'
#' Embeds the rows of `X_new` in the embedding that [neighbor_embedding()]
#' made with `ret_model = TRUE`, without moving the points already there.
#' Each new row gets affinities to the reference rows from its own
#' neighbours among them (the model's kind: nearest or locally scaled
#' neighbours), starts at the affinity-weighted mean of those neighbours'
#' coordinates, and is then moved to lower its own cost under the model's
#' cost (t-SNE, LargeVis, UMAP or t-UMAP) against the fixed reference
#' points. New points do not repel each other.
#'
#' **Affinities.** t-SNE and LargeVis: the perplexity-calibrated conditional
#' probabilities of the row's `3 * perplexity` nearest reference rows,
#' scaled to sum to `1 / n` (a reference row's share of the symmetric P);
#' t-SNE normalises each new point's output similarities over the reference
#' alone. UMAP and t-UMAP: the row's fuzzy memberships over its
#' `n_neighbors` nearest reference rows, as in `uwot::umap_transform()`.
#'
#' **PaCMAP and LocalMAP.** The new rows are projected by the model's
#' principal components (when it has them); each row's near pairs are its
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
#' @param model The `model` element of `neighbor_embedding(..., ret_model =
#'   TRUE)`.
#' @param nn_method Optional neighbours of the new rows among the reference
#'   rows: `list(idx, dist)`, `nrow(X_new) x k` matrices, `idx` holding
#'   reference row numbers (no self column), distances increasing; for
#'   example from [extended_knn_query()] or [locally_scaled_knn_query()].
#'   Needed when the model was fitted on a graph without data.
#' @param max_iter Iterations (epochs for a sampled model); `NULL` for 250
#'   (100 epochs).
#' @param eta Step size (the initial learning rate for a sampled model);
#'   `NULL` for twice the model's step size after its exaggeration (a
#'   quarter of its learning rate for a sampled model).
#' @param n_threads Number of threads.
#' @param verbose If `TRUE`, report the steps and the cost.
#' @return An `nrow(X_new) x n_components` matrix of coordinates (row names
#'   of `X_new` kept), with attribute `cost`, the cost history of the new
#'   points.
#' @seealso [neighbor_embedding()]
#' @examples
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' train <- seq(1, nrow(X), by = 2)
#' set.seed(1)
#' fit <- neighbor_embedding(X[train, ], "umap", ret_model = TRUE, max_iter = 200)
#' Y_new <- neighbor_embedding_transform(X[-train, ], fit$model)
#' plot(fit$embedding, col = "grey")
#' points(Y_new, col = "red")
#' @export
neighbor_embedding_transform <- function(X_new = NULL, model, nn_method = NULL,
                                         max_iter = NULL, eta = NULL, n_threads = 1,
                                         verbose = FALSE) {
  if (missing(model)) stop_arg("'model' is missing: give the model of neighbor_embedding(..., ret_model = TRUE)")
  model <- check_embedding_model(model)
  n_threads <- check_n_threads(n_threads)
  verbose <- check_flag(verbose, "verbose")
  if (!is.null(max_iter)) max_iter <- check_whole(max_iter, "max_iter", min = 0)
  if (!is.null(eta)) eta <- check_number(eta, "eta", min = 0, above = TRUE)
  Y_ref <- model$embedding
  n_ref <- nrow(Y_ref)
  # (the query checks X_new itself)
  row_names <- if (!is.null(X_new)) rownames(X_new)
  if (!is.null(nn_method)) {
    nn_method <- check_query_graph(nn_method, n_ref, if (!is.null(X_new)) NROW(X_new),
                                   "nn_method")
  } else {
    if (is.null(X_new)) stop_arg("give the new data as 'X_new' or their neighbours as 'nn_method'")
    if (is.null(model$index)) {
      stop_arg("'model' was fitted on a neighbour graph without data: give the new rows' ",
               "neighbours among the reference rows as 'nn_method'")
    }
  }
  if (model$method %in% c("pacmap", "localmap")) {
    Y <- pacmap_transform(model, X_new, nn_method, max_iter, eta, n_threads, verbose)
    dimnames(Y) <- list(row_names, colnames(Y_ref))
    return(Y)
  }
  graph <- if (!is.null(nn_method)) nn_method else {
    ne_msg(verbose, "neighbor_embedding_transform: ", model$neighbors, " neighbours of ",
           NROW(X_new), " new rows")
    model_query(model, X_new, n_threads, verbose)
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
  layout <- if (sampled) {
    list(stepper = "sampled", max_iter = max_iter, epoch = if (verbose) 10L else 0L,
         learning_rate = eta, negative_sample_rate = model$negative_sample_rate,
         gamma = model$sample_gamma, seed = draw_seed())
  } else {
    list(stepper = "gradient_descent", max_iter = max_iter, epoch = 50L, tol = 1e-7,
         eta = eta, eta_exaggerated = eta, momentum = 0.5, final_momentum = 0.8,
         mom_switch_iter = 50L, exaggeration = 1, stop_lying_iter = 0L, min_gain = 0.01)
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
  dimnames(Y) <- list(row_names, colnames(Y_ref))
  attr(Y, "cost") <- res$cost
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

model_query <- function(model, X_new, n_threads, verbose) {
  k <- ne_query_k(model$method, nrow(model$embedding), model$perplexity, model$n_neighbors)
  query <- if (model$neighbors == "lsnn") locally_scaled_knn_query else extended_knn_query
  query(model$index, X_new, n_neighbors = k, n_threads = n_threads, verbose = verbose)
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

#' @export
print.lsnn_embedding_model <- function(x, ...) {
  cat(sprintf("lsnn embedding model: %s, %d points in %d dimensions, %s neighbours%s\n",
              x$method, nrow(x$embedding), ncol(x$embedding), x$neighbors,
              if (is.null(x$index)) " (no data index: new points need 'nn_method')" else ""))
  invisible(x)
}

check_embedding_model <- function(model) {
  if (!inherits(model, "lsnn_embedding_model")) {
    stop_arg("'model' must be the model of neighbor_embedding(..., ret_model = TRUE)")
  }
  if (!identical(model$format_version, embedding_model_version)) {
    stop_arg("'model' was saved by another version of lsnn (format ",
             format(model$format_version), ", this version reads ", embedding_model_version,
             "): fit it again")
  }
  model
}

# nn_method for new rows: list(idx, dist) with `m` rows (when known), idx
# in 1..n_ref, dist finite, non-negative and increasing along each row.
check_query_graph <- function(g, n_ref, m, name) {
  if (!is.list(g) || is.null(g$idx) || is.null(g$dist)) {
    stop_arg("'", name, "' must be a list with matrices 'idx' and 'dist'")
  }
  idx <- g$idx
  dist <- g$dist
  if (!is.matrix(idx) || !is.matrix(dist) || !identical(dim(idx), dim(dist)) || ncol(idx) < 1) {
    stop_arg("'", name, "$idx' and '", name, "$dist' must be matrices of the same size")
  }
  if (!is.null(m) && nrow(idx) != m) {
    stop_arg("'", name, "' has ", nrow(idx), " rows but 'X_new' has ", m)
  }
  if (!is.numeric(idx) || anyNA(idx) || any(idx < 1) || any(idx > n_ref) ||
      any(idx != round(idx))) {
    stop_arg("'", name, "$idx' must hold reference row numbers, 1 to ", n_ref)
  }
  if (!is.numeric(dist) || !all_finite(dist) || any(dist < 0)) {
    stop_arg("'", name, "$dist' must be finite and non-negative")
  }
  if (ncol(dist) > 1 && any(dist[, -1, drop = FALSE] < dist[, -ncol(dist), drop = FALSE])) {
    stop_arg("'", name, "$dist' must increase along each row")
  }
  storage.mode(idx) <- "integer"
  storage.mode(dist) <- "double"
  list(idx = idx, dist = dist)
}
