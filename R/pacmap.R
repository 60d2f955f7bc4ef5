# PaCMAP and LocalMAP: neighbor_embedding(method = "pacmap" | "localmap"),
# their pairs, their cost in cost_gradient() and new points in their models.
# The method itself is documented in ?neighbor_embedding ("PaCMAP and
# LocalMAP"); the core is inst/include/lsnn/pacmap.h.

# PaCMAP's number of near pairs per point: 10 up to 10,000 points, then
# growing with log10(n) as in the official implementation.
pacmap_n_neighbors <- function(n) {
  if (n <= 10000) 10L else as.integer(round(10 + 15 * (log10(n) - 4)))
}

# The numbers of near, mid-near and further pairs per point for n points,
# capped (as the official implementation caps them) so that every row can
# draw its pairs from the other points.
pacmap_pair_counts <- function(n, n_near, mn_ratio, fp_ratio) {
  # (in doubles: a large ratio times n_near is no integer)
  n_near <- min(n_near, n - 1)
  n_mid <- min(round(n_near * mn_ratio), n - 1)
  n_far <- min(round(n_near * fp_ratio), n - 1 - n_near)
  if (n_near + n_mid + n_far >= n) {
    n_near <- floor(n / (1 + mn_ratio + fp_ratio))
    n_mid <- floor(n_near * mn_ratio)
    n_far <- floor(n_near * fp_ratio)
  }
  if (n_near < 1 || (fp_ratio > 0 && n_far < 1)) {
    stop_arg("PaCMAP needs more points: ", n, " leave no room for its near and further pairs ",
             "with mn_ratio = ", show_value(mn_ratio), " and fp_ratio = ", show_value(fp_ratio))
  }
  # mid-near pairs draw 6 candidates (at least 2) besides the row's earlier ones
  n_mid <- max(0, min(n_mid, n - 3))
  c(near = as.integer(n_near), mid_near = as.integer(n_mid), further = as.integer(n_far))
}

# The columns of the local scale of PaCMAP's near pairs: the 5th to 7th
# neighbours (the row itself the first), fewer for fewer than 7 points.
pacmap_scale_columns <- function(n) {
  scale_to <- min(7L, as.integer(n))
  c(from = min(5L, scale_to), to = scale_to)
}

# PaCMAP's reduction when `pca` is NULL: data of more than 100 columns to
# their first 100 principal components, as the official implementation, or
# of fewer rows to n - 1 components (which keep every distance between the
# centred rows: they span n - 1 dimensions at most).
pacmap_default_pca <- function(data) {
  if (!is.null(data) && data$d > 100) as.integer(max(0, min(100, data$n - 1))) else 0L
}

# The start: 0.01 times the first principal components (of the reduced
# data when it was reduced, which are its first columns when it was
# centred; else of the data scaled to a range of 1), as the official
# implementation; "random": N(0, 1e-4^2); or a matrix as given. `pca`: the
# reduction's list(center, rotation), or NULL.
pacmap_init <- function(init, data, pca, n, k, verbose) {
  if (is.null(init)) init <- "pca"
  if (is.character(init) && length(init) == 1 && init == "spectral") {
    stop_arg("'init' = \"spectral\" is not available for PaCMAP and LocalMAP (they have no ",
             "affinity graph): use \"pca\", \"random\" or a matrix")
  }
  if (!(is.character(init) && identical(init, "pca"))) {
    return(ne_init(init, data, NULL, n, k, 1e-4, verbose))
  }
  if (is.null(data)) stop_arg("'init' = \"pca\" needs the data as 'X', not only a graph, distances or affinities")
  ne_msg(verbose, "neighbor_embedding: pca initialisation")
  Y <- if (!is.null(pca) && !is.null(pca$center) && data$d >= k) {
    0.01 * dense_data(data)[, seq_len(k), drop = FALSE]
  } else if (!is.null(pca)) {
    0.01 * ne_pca(dense_data(data), k)
  } else {
    X <- dense_data(data)
    range <- max(X) - min(X)
    if (!(range > 0)) range <- 1
    0.01 * ne_pca(X, k) / range
  }
  spread_collapsed(Y, "the pca start")
}

# The warning when a given graph has fewer neighbours per row besides the
# row itself (n_cols) than PaCMAP's rule asks for at n points (wanted) and
# the user did not give n_neighbors: the layout then uses n_cols near pairs
# per point. `sharded`: the graph is a sharded one (the call that makes a
# larger one differs).
pacmap_short_graph_warning <- function(n_cols, wanted, n, sharded) {
  call <- if (sharded) {
    paste0("locally_scaled_knn_sharded(shards, n_neighbors = ", wanted + 1L, ")")
  } else {
    paste0("locally_scaled_knn(X, n_neighbors = ", wanted + 1L, ")")
  }
  warning("the ", if (sharded) "sharded ", "graph 'nn_method' has ", show_count(n_cols),
          " neighbours per point besides the point itself, fewer than the ",
          show_count(wanted), " near pairs of PaCMAP's rule at ", show_count(n), " points ",
          "(see ?neighbor_embedding): the layout uses ", show_count(n_cols), ". For ",
          show_count(wanted), ", make the graph with ", call, "; to use this one, give ",
          "n_neighbors = ", n_cols, call. = FALSE)
}

# The number of near pairs per row of a checked graph (its neighbours after
# the row itself, n_near of them): n_near, when the graph has them.
pacmap_near_columns <- function(graph, n_near) {
  if (ncol(graph$idx) - 1L < n_near) {
    stop_arg("'nn_method' has ", ncol(graph$idx) - 1L, " neighbours per row besides the row ",
             "itself; PaCMAP's 'n_neighbors' asks for ", n_near)
  }
  n_near
}

# neighbor_embedding() for "pacmap" and "localmap" (ne_methods()'s run of
# these), from the inputs and the checked arguments in `a`: the near pairs
# (the locally scaled graph), the mid-near pairs, the start and the layout,
# for ne_result().
ne_pacmap <- function(inputs, a, t_start) {
  n <- inputs$n
  verbose <- a$verbose
  pacmap_check_inputs(inputs)
  counts <- pacmap_counts_of_inputs(inputs, a)
  ne_msg(verbose, "neighbor_embedding: ", a$method, ", ", show_count(n),
         " points; pairs per point: ", counts[["near"]], " near, ", counts[["mid_near"]],
         " mid-near, ", counts[["further"]], " further")
  data <- inputs$data
  near <- pacmap_near_graph(inputs, a, counts[["near"]])
  graph <- near$graph
  near_k <- pacmap_near_columns(graph, counts[["near"]])
  ne_msg(verbose, "neighbor_embedding: mid-near pairs")
  mid_near <- .pacmap_mid_near(data, a$metric, counts[["mid_near"]], step_seed(a$seed, "pairs"),
                               a$n_threads,
                               simd_option())
  t_aff <- proc.time()[["elapsed"]]

  Y0 <- pacmap_init(a$init, data, inputs$pca, n, a$n_components, verbose)
  t_init <- proc.time()[["elapsed"]]
  # (the data are not needed past this point unless for the model's index;
  # sharded data read for this call, or their principal components, are
  # freed here: the core's allocation of the pairs never makes R collect)
  row_names <- inputs$row_names
  pca <- inputs$pca
  if (!a$ret_model) {
    released <- held_bytes(data)
    rm(data, inputs)
    collect_garbage(released)
  }
  max_iter <- if (is.null(a$max_iter)) sum(a$phases) else a$max_iter
  eta <- if (is.null(a$eta)) 1 else a$eta
  layout <- ne_layout_settings("adam", max_iter, a$epoch, eta, callback = a$callback,
                               row_names = row_names, phases = a$phases,
                               local = a$method == "localmap",
                               low_dist_thres = a$low_dist_thres, constant = FALSE)
  ne_msg(verbose, "neighbor_embedding: further pairs; optimizing (Adam, learning rate ",
         signif(eta, 4), ")")
  want_pairs <- (is.character(a$ret_extra) && "pairs" %in% a$ret_extra) || isTRUE(a$ret_extra)
  # (a large layout runs in an order of the near graph: R/renumber.R)
  order <- layout_order(graph$idx, 1L, near_k, n)
  layout <- renumbered_callback(layout, order)
  # (the further pairs, and LocalMAP's redraws, are drawn inside the layout)
  res <- .pacmap_layout(Y0, 0L, list(near = graph$idx, near_from = 1L, near_k = near_k,
                                     mid_near = mid_near, further = NULL,
                                     n_further = counts[["further"]]),
                        layout, step_seed(a$seed, "layout"), a$n_threads, verbose, want_pairs,
                        order)
  pairs <- if (want_pairs) {
    list(near = graph$idx[, 1L + seq_len(near_k), drop = FALSE], mid_near = mid_near,
         further = res$further)
  }
  t_end <- proc.time()[["elapsed"]]
  Y <- res$Y
  dimnames(Y) <- list(row_names, NULL)
  model <- if (a$ret_model) {
    pacmap_model(a, Y, near$index, data, counts, eta, pca)
  }
  list(Y = Y, model = model, extras = list(nn = graph, pairs = pairs),
       details = list(cost = res$cost, iterations = res$iterations, converged = FALSE,
         stopped = res$stopped,
         time = c(affinities = t_aff - t_start, init = t_init - t_aff,
                  optimize = t_end - t_init, total = t_end - t_start),
         pairs = pairs, nn = graph, gradient = "pairs", eta = eta, phases = a$phases,
         low_dist_thres = if (a$method == "localmap") a$low_dist_thres))
}

# PaCMAP's inputs: the data, from which its mid-near pairs are drawn.
pacmap_check_inputs <- function(inputs) {
  if (!is.null(inputs$P)) {
    stop_arg("'P' is for t-SNE, LargeVis, UMAP and t-UMAP: PaCMAP and LocalMAP lay out pairs ",
             "drawn from the data (give the data as 'X')")
  }
  if (!is.null(inputs$distances)) {
    stop_arg("PaCMAP's mid-near pairs are drawn from the data: give the data as 'X', not ",
             "their distances")
  }
  if (is.null(inputs$data)) {
    stop_arg("PaCMAP's mid-near pairs are drawn from the data: give 'X' as well as 'nn_method'")
  }
  invisible()
}

# The pairs per point: near ones from n_neighbors (or PaCMAP's rule, within
# what a given graph holds), mid-near and further ones from their ratios.
pacmap_counts_of_inputs <- function(inputs, a) {
  n <- inputs$n
  given_near <- a$n_neighbors
  n_near <- if (is.null(given_near)) pacmap_n_neighbors(n) else given_near
  if (!is.null(inputs$graph) && is.null(given_near)) {
    # (a sharded graph's warning was given as its shards were read)
    if (ncol(inputs$graph$idx) - 1L < n_near && !isTRUE(inputs$sharded)) {
      pacmap_short_graph_warning(ncol(inputs$graph$idx) - 1L, n_near, n, sharded = FALSE)
    }
    n_near <- min(n_near, ncol(inputs$graph$idx) - 1L)
  }
  counts <- pacmap_pair_counts(n, n_near, a$mn_ratio, a$fp_ratio)
  # (the locally scaled search lists at most n - 2 neighbours besides the row)
  if (is.null(inputs$graph)) counts[["near"]] <- min(counts[["near"]], n - 2L)
  counts
}

# The near pairs' graph: the one given, or the locally scaled neighbours
# of the data (with ret_model, and its index).
pacmap_near_graph <- function(inputs, a, n_near) {
  if (!is.null(inputs$graph)) return(list(graph = inputs$graph, index = NULL))
  kind <- search_kind(inputs$n, inputs$data, n_near + 51L, a$metric, a$n_threads)
  ne_msg(a$verbose, "neighbor_embedding: ", kind, " locally scaled neighbours")
  found <- pacmap_lsnn(inputs$data, inputs$n, n_near, a, kind, a$ret_model, "graph", a$verbose)
  if (a$ret_model) list(graph = found$lsnn, index = found$index) else list(graph = found)
}

# PaCMAP's locally scaled search of the data (its scales from the columns
# of pacmap_scale_columns()), the call's step `step` (R/seeds.R).
pacmap_lsnn <- function(data, n, n_near, a, kind, ret_index, step, verbose = FALSE) {
  scale <- pacmap_scale_columns(n)
  locally_scaled_knn(dense_or_rows(data), n_neighbors = n_near + 1L, n_extra = 50,
                     scale_from = scale[["from"]], scale_to = scale[["to"]],
                     n_threads = a$n_threads, nn_kind = kind, verbose = verbose,
                     ret_index = ret_index, metric = a$metric,
                     seed = step_seed_number(a$seed, step))
}

# A PaCMAP model, with the index of its data (searched again when the graph
# was given).
pacmap_model <- function(a, Y, index, data, counts, eta, pca) {
  if (is.null(index)) {
    index <- pacmap_lsnn(data, nrow(Y), counts[["near"]], a,
                         search_kind(nrow(Y), data, counts[["near"]] + 51L, a$metric, a$n_threads),
                         ret_index = TRUE, step = "index")$index
  }
  ne_model(a$method, cost = list(method = a$method, low_dist_thres = a$low_dist_thres),
           gradient = "pairs", embedding = unname(Y), index = index, neighbors = "lsnn",
           perplexity = NA_real_, n_neighbors = counts[["near"]], eta = eta,
           negative_sample_rate = counts[["further"]], sample_gamma = NA_real_, pca = pca)
}

# neighbor_embedding()'s points when X is a shard set (PaCMAP and LocalMAP
# only): the rows read into one matrix (for the mid-near pairs and the
# start), with the shards' row names where every shard has them (as the
# matrix of all rows would have them), and the neighbour lists of the
# sharded graph nn_method without their distances, one shard at a time.
# The graph must be that of these shards: the fingerprints its run recorded
# are those of the shards (check_graph_of_shards(), and each shard's where
# it is read). The distances are not needed, and at 1e7 rows they would
# take 4.5 GB. Without `n_neighbors` (the user's, NULL if not given), a
# graph of fewer neighbours than PaCMAP's rule asks for is laid out as it
# is, with a warning (pacmap_short_graph_warning()).
pacmap_shard_inputs <- function(X, nn_method, method, verbose, n_neighbors = NULL) {
  if (!method %in% c("pacmap", "localmap")) {
    stop_arg("'X' is a shard set: sharded data are laid out by method = \"pacmap\" or ",
             "\"localmap\"; for the other methods pass read_graph_shards(graph) as 'nn_method'")
  }
  shards <- as_shard_set(X, "X")
  if (!inherits(nn_method, "lsnn_graph_shards") &&
      !(is.character(nn_method) && length(nn_method) == 1 && !is.na(nn_method) &&
        dir.exists(nn_method))) {
    stop_arg("'X' is a shard set: give its sharded graph as 'nn_method' (the result of ",
             "locally_scaled_knn_sharded(X, ..., out_dir = ) or that out_dir)")
  }
  nn_method <- as_graph_shards(nn_method, "nn_method")
  check_graph_of_shards(nn_method, shards, "nn_method", "X")
  # (an integer where it fits, so that messages print 300000, not 3e+05)
  n <- sum(shards$rows)
  if (n <= big_int) n <- as.integer(n)
  wanted <- pacmap_n_neighbors(n)
  if (is.null(n_neighbors) && nn_method$k - 1L < wanted) {
    pacmap_short_graph_warning(nn_method$k - 1L, wanted, n, sharded = TRUE)
  }
  first <- shard_offsets(shards)
  ne_msg(verbose, "neighbor_embedding: reading ", length(shards$files), " shards (",
         show_count(n), " rows) of data and graph")
  data <- matrix(0, n, shards$n_col)
  idx <- matrix(0L, n, nn_method$k)
  names <- vector("list", length(shards$files))
  for (s in seq_along(shards$files)) {
    rows <- first[s] + seq_len(shards$rows[s])
    x <- read_shard(shards, s, fingerprint = FALSE)
    check_graph_shard(nn_method, shards, s, check_fingerprint(x, shards, s), "nn_method", "X")
    data[rows, ] <- x
    names[s] <- list(rownames(x))
    rm(x)
    idx[rows, ] <- read_graph_shards(nn_method, which = s)$idx
  }
  row_names <- if (!any(vapply(names, is.null, TRUE))) unlist(names, use.names = FALSE)
  list(data = prepare_data(data, "euclidean", "X"), graph = list(idx = idx), n = n,
       row_names = row_names, sharded = TRUE)
}

# PaCMAP's phase lengths: three whole numbers.
check_phases <- function(phases) {
  if (!is.numeric(phases) || length(phases) != 3 || anyNA(phases) || any(!is.finite(phases)) ||
      any(phases < 0) || any(phases != round(phases)) || sum(phases) > big_int) {
    stop_arg("'phases' must be three non-negative whole numbers (iterations of PaCMAP's ",
             "three phases), such as c(100, 100, 250)")
  }
  as.integer(phases)
}

# The pair sets of cost_gradient(method = "pacmap"): list(near, mid_near,
# further), each an n x k matrix of partners (1-based, never the row itself).
check_pair_sets <- function(pairs, n, name = "P") {
  kinds <- c("near", "mid_near", "further")
  if (!is.list(pairs) || !all(kinds %in% names(pairs))) {
    stop_arg("'", name, "' must be a list of pair sets 'near', 'mid_near' and 'further' ",
             "(as neighbor_embedding(..., ret_extra = \"pairs\") returns) for PaCMAP")
  }
  out <- lapply(kinds, function(kind) {
    m <- pairs[[kind]]
    label <- paste0(name, "$", kind)
    if (is.null(m)) m <- matrix(integer(0), n, 0)
    if (!is.matrix(m) || !is.numeric(m) || nrow(m) != n) {
      stop_arg("'", label, "' must be a numeric matrix with one row per point (", n, ")")
    }
    if (anyNA(m) || any(m < 1) || any(m > n) || any(m != round(m))) {
      stop_arg("'", label, "' must hold point numbers, 1 to ", n)
    }
    storage.mode(m) <- "integer"
    if (ncol(m) > 0 && any(m == seq_len(n))) {
      stop_arg("'", label, "' pairs a point with itself (row ",
               (which(m == seq_len(n))[1] - 1L) %% n + 1L, ")")
    }
    m
  })
  stats::setNames(out, kinds)
}

# cost_gradient() of "pacmap" and "localmap" (the near term of LocalMAP's
# last phase).
pacmap_cost_gradient <- function(Y, pairs, method, weights, low_dist_thres, n_threads) {
  pairs <- check_pair_sets(pairs, nrow(Y))
  kinds <- c("near", "mid_near", "further")
  if (!is.numeric(weights) || length(weights) != 3 || anyNA(weights) ||
      any(!is.finite(weights)) || any(weights < 0)) {
    stop_arg("'weights' must be three finite non-negative numbers, the weights of the ",
             "near, mid-near and further pairs")
  }
  if (!is.null(names(weights))) {
    if (!setequal(names(weights), kinds)) {
      stop_arg("'weights' must be named ", paste0('"', kinds, '"', collapse = ", "),
               " (or unnamed, in that order)")
    }
    weights <- weights[kinds]
  }
  low_dist_thres <- check_number(low_dist_thres, "low_dist_thres", min = 0, above = TRUE)
  local_scale <- if (method == "localmap") low_dist_thres / 2 else 0
  res <- .pacmap_cost_gradient(Y, 0L, pairs, as.numeric(weights), local_scale, n_threads)
  dimnames(res$gradient) <- dimnames(Y)
  res
}

# neighbor_embedding_transform() of a PaCMAP or LocalMAP model (X_new as
# prepare_new_rows() gives it: projected when the model has a PCA): each new
# row's near pairs are its locally scaled neighbours among the reference
# rows and its further pairs random other reference rows; it starts at the
# mean of its near partners and moves under the last phase's weights (near
# 1, further 1) against the fixed reference. `seed`: the call's (R/seeds.R).
pacmap_transform <- function(model, X_new, graph, max_iter, eta, n_threads, verbose,
                             callback, epoch, row_names, seed) {
  Y_ref <- model$embedding
  n_ref <- nrow(Y_ref)
  k <- min(model$n_neighbors, n_ref - 1L)
  if (is.null(graph)) {
    data <- prepare_data(X_new, "euclidean", "X_new", min_rows = 1)
    graph <- model_query(model, data, n_threads, verbose, step_seed(seed, "query"))
  }
  near <- graph$idx[, seq_len(min(k, ncol(graph$idx))), drop = FALSE]
  m <- nrow(near)
  n_far <- min(model$negative_sample_rate, n_ref - 1L - ncol(near))
  further <- .pacmap_further(near, n_ref, max(n_far, 0L), step_seed(seed, "pairs"), n_threads)
  Y0 <- matrix(0, m, ncol(Y_ref))
  for (j in seq_len(ncol(near))) Y0 <- Y0 + Y_ref[near[, j], , drop = FALSE]
  Y0 <- Y0 / ncol(near)
  if (is.null(max_iter)) max_iter <- 100L
  if (is.null(eta)) eta <- 0.1 * model$eta
  pairs <- list(near = near, mid_near = matrix(0L, m, 0), further = further)
  layout <- ne_layout_settings("adam", max_iter, if (verbose) 10L else 0L, eta,
                               callback = callback, callback_every = epoch,
                               row_names = row_names)
  ne_msg(verbose, "neighbor_embedding_transform: placing ", m, " points (Adam)")
  # (the further pairs are given: the layout's seed draws nothing here)
  res <- .pacmap_layout(rbind(Y_ref, Y0), n_ref, pairs, layout, step_seed(seed, "layout"),
                        n_threads, verbose, FALSE)
  Y <- res$Y[n_ref + seq_len(m), , drop = FALSE]
  attr(Y, "cost") <- res$cost
  attr(Y, "iterations") <- res$iterations
  Y
}

