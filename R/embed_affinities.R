# t-SNE, LargeVis, UMAP and t-UMAP: the affinities of the inputs, laid out
# by the engine.

# The input affinities of resolve_inputs()'s points for t-SNE, LargeVis,
# UMAP and t-UMAP, and the graph they come from: the affinities given as
# `P` (ne_given_affinities()), or those of the graph (given, searched in the
# data, or read from the distances; with ret_model, the index of the data
# too). Returns list(P, graph, index); the graph NULL unless `keep_graph`
# (it is let go as soon as it has served: see below). `seed`: the call's
# (R/seeds.R).
ne_affinities <- function(inputs, method, perplexity, n_neighbors, neighbors, n_threads,
                          verbose, ret_model, seed, keep_graph = TRUE) {
  if (!is.null(inputs$P)) {
    return(list(P = ne_given_affinities(inputs$P, method), graph = NULL, index = NULL))
  }
  n <- inputs$n
  graph <- inputs$graph
  index <- NULL
  # (only the data make an index)
  ret_index <- ret_model && !is.null(inputs$data)
  if (method %in% c("tsne", "largevis")) {
    # all pairs up to 1,000 rows of data (of distances: a graph of every
    # point), else the 3 * perplexity nearest
    few <- n <= 1000 && neighbors == "knn"
    # (the all-pairs affinities of the data themselves are euclidean)
    by_graph <- !few || !is.null(inputs$distances) || !identical(inputs$metric, "euclidean")
    if (is.null(graph) && by_graph) {
      n_cols <- if (few) n else min(n, as.integer(ceiling(3 * perplexity)) + 1L)
      graph <- ne_data_graph(inputs, n_cols, neighbors, n_threads, verbose, ret_index,
                             step_seed(seed, "graph"))
      index <- graph$index
      graph <- graph$graph
    }
    ne_msg(verbose, "neighbor_embedding: perplexity calibration (perplexity ", perplexity, ")")
    if (is.null(graph)) {
      P <- perplexity_of_inputs(list(data = inputs$data, graph = NULL, n = n), perplexity,
                                n_threads, verbose)$P
    } else {
      # the graph goes before P is made: at 1e6 points of 90 neighbours the
      # graph (1.1 GB), the conditional rows (1.1 GB) and P (1.8 GB) would
      # otherwise be held at once
      rows <- perplexity_rows_of_graph(graph, perplexity, n_threads, verbose)
      if (!keep_graph) {
        released <- held_bytes(graph)
        graph <- NULL
        collect_garbage(released)
      }
      P <- symmetric_perplexity(rows, n_threads)
    }
  } else {
    if (is.null(graph)) {
      if (n_neighbors > n) {
        stop_arg("'n_neighbors' must be at most the number of points, ", n, " (it is ",
                 n_neighbors, ")")
      }
      graph <- ne_data_graph(inputs, n_neighbors, neighbors, n_threads, verbose, ret_index,
                             step_seed(seed, "graph"))
      index <- graph$index
      graph <- graph$graph
    }
    ne_msg(verbose, "neighbor_embedding: UMAP affinities")
    P <- umap_of_graph(graph, n_threads = n_threads, verbose = verbose)$V
  }
  list(P = P, graph = if (keep_graph) graph, index = index)
}

# Affinities given as `P` (read_affinities()'s list), made what the method
# lays out: without the diagonal; for t-SNE and LargeVis scaled to sum to 1,
# as perplexity_affinities() gives them (a P that already does, to within
# 1e-9, is used as it is, so that its layout is the one of the data it was
# computed from); for UMAP and t-UMAP as they are, fuzzy memberships of at
# most 1.
ne_given_affinities <- function(affinities, method) {
  P <- affinities$P
  if (affinities$diagonal > 0) {
    Matrix::diag(P) <- 0
    P <- Matrix::drop0(P)
  }
  if (length(P@x) == 0 || max(P@x) <= 0) {
    stop_arg("'P' has no positive affinities between different points")
  }
  if (method %in% c("tsne", "largevis")) {
    total <- sum(P@x)
    if (abs(total - 1) > 1e-9) P@x <- P@x / total
  } else if (max(P@x) > 1) {
    stop_arg("'P' must hold fuzzy memberships between 0 and 1 for method = \"", method,
             "\" (its largest affinity is ", show_value(max(P@x)), "): give the output of ",
             "umap_affinities(), or scale P")
  }
  P
}

# The neighbours of the data's rows, a graph of `n_cols` columns (the row
# itself first): the nearest ("knn", by the one search rule of
# graph_of_inputs()) or the locally scaled ones ("lsnn"); with `ret_index`
# also the index that places new rows (neighbor_embedding_transform()). The
# search's seed is `seed` (of draw_seed()'s form).
ne_data_graph <- function(inputs, n_cols, neighbors, n_threads, verbose, ret_index, seed) {
  if (!is.null(inputs$distances)) {
    if (neighbors == "knn") {
      return(list(graph = graph_of_inputs(inputs, n_cols, n_threads, verbose,
                                          "neighbor_embedding", seed), index = NULL))
    }
    # as locally_scaled_knn(): the locally scaled among 50 extra candidates
    n_near <- max(1L, min(n_cols, inputs$n - 1L))
    enn <- graph_of_inputs(inputs, n_near + 51L, n_threads, verbose, "neighbor_embedding",
                           seed)
    return(list(graph = enn_to_lsnn(enn, n_near, n_extra = 51L, n_threads = n_threads),
                index = NULL))
  }
  if (neighbors == "knn" && !ret_index) {
    return(list(graph = graph_of_inputs(inputs, n_cols, n_threads, verbose,
                                        "neighbor_embedding", seed), index = NULL))
  }
  metric <- if (is.null(inputs$metric)) "euclidean" else inputs$metric
  kind <- search_kind(inputs$n, inputs$data, n_cols + if (neighbors == "lsnn") 50L else 0L, metric,
                      n_threads)
  ne_msg(verbose, "neighbor_embedding: ", kind, " ", n_cols - 1L, "-nearest ",
         if (neighbors == "lsnn") "locally scaled ", "neighbours")
  X <- dense_or_rows(inputs$data)
  res <- if (neighbors == "knn") {
    extended_knn(X, n_neighbors = n_cols - 1L, n_extra = 0, n_threads = n_threads,
                 nn_kind = kind, verbose = verbose, ret_index = ret_index, metric = metric,
                 seed = seed[[1]])
  } else {
    locally_scaled_knn(X, n_neighbors = n_cols, n_threads = n_threads, nn_kind = kind,
                       verbose = verbose, ret_index = ret_index, metric = metric,
                       seed = seed[[1]])
  }
  if (!ret_index) return(list(graph = res, index = NULL))
  list(graph = if (neighbors == "knn") res$enn else res$lsnn, index = res$index)
}

# The layout of t-SNE, LargeVis, UMAP and t-UMAP (ne_methods()'s run of
# these): the input affinities, the settings, the start, the engine's
# layout and the model, for ne_result().
ne_run_affinities <- function(inputs, a, t_start) {
  n <- inputs$n
  ne_msg(a$verbose, "neighbor_embedding: ", a$method, ", ", show_count(n), " points")
  keep_nn <- is.character(a$ret_extra) && "nn" %in% a$ret_extra
  radii_wanted <- dens_radii_wanted(a$dens, a$ret_extra, inputs, a$method)
  aff <- ne_affinities(inputs, a$method, a$perplexity, a$n_neighbors, a$neighbors, a$n_threads,
                       a$verbose, a$ret_model, a$seed, keep_graph = keep_nn || radii_wanted)
  # (the data's radii from the data's own affinities, before any labels)
  data_radii <- if (radii_wanted) dens_data_radii(aff$P, aff$graph, inputs, a$n_threads)
  P <- supervise_affinities(aff$P, a$target, a$method, a$n_threads, a$verbose,
                            step_seed(a$seed, "target_graph"))
  graph <- if (keep_nn) aff$graph
  index <- aff$index
  # what the search and the affinities let go (the graph, the conditional
  # rows) is of the order of P
  released <- held_bytes(P)
  rm(aff)
  collect_garbage(released)
  t_aff <- proc.time()[["elapsed"]]

  s <- ne_affinity_settings(a, n, has_data = !is.null(inputs$data))
  Y0 <- ne_init(s$init, inputs$data, P, n, a$n_components, s$init_sdev, a$verbose)
  t_init <- proc.time()[["elapsed"]]
  # P made here is seen by nothing else while the layout runs; when it is not
  # returned either, the layout may rewrite it for good (into the order in
  # which it reads it, at scale)
  want_radii <- is.character(a$ret_extra) && "radii" %in% a$ret_extra
  returns_P <- isTRUE(a$ret_extra) ||
    (is.character(a$ret_extra) && any(c("P", "fgraph") %in% a$ret_extra)) || want_radii
  P_access <- if (!is.null(inputs$P)) "read" else if (returns_P) "renumber" else "consume"
  # a large sampled layout runs on its points renumbered (R/renumber.R)
  in_order <- if (s$sampled) affinities_in_layout_order(P, n)
  if (is.null(in_order)) {
    res <- ne_affinity_layout(Y0, P, s, a, n, inputs$row_names, P_access, data_radii)
  } else {
    o <- in_order$order
    if (P_access == "consume") {
      released <- held_bytes(P)
      P <- NULL
      collect_garbage(released)
    }
    res <- ne_affinity_layout(Y0[o, , drop = FALSE], in_order$P, s, a, n, inputs$row_names,
                              "consume", data_radii[o], o)
    rm(in_order)
    res$Y <- res$Y[order_rank(o), , drop = FALSE]
  }
  t_end <- proc.time()[["elapsed"]]
  # P made here and not returned is freed now rather than at some later
  # collection, so that what the caller does next does not stack on it
  if (P_access == "consume") {
    released <- held_bytes(P)
    P <- NULL
    collect_garbage(released)
  }
  Y <- res$Y
  dimnames(Y) <- list(inputs$row_names, NULL)
  model <- if (a$ret_model) ne_affinity_model(inputs, index, s, a, Y)
  radii <- if (want_radii) dens_radii_result(data_radii, Y, P, s$cs, a$n_threads)
  list(Y = Y, model = model, extras = list(nn = graph, P = P, fgraph = P, radii = radii),
       details = list(cost = res$cost, iterations = res$iterations,
         converged = res$converged, stopped = res$stopped,
         time = c(affinities = t_aff - t_start, init = t_init - t_aff,
                  optimize = t_end - t_init, total = t_end - t_start),
         P = P, gradient = s$grad_kind, eta = s$eta,
         eta_exaggerated = if (s$sampled) NULL else s$eta_exaggerated,
         exaggeration = s$exaggeration, stop_lying_iter = s$stop_lying_iter,
         gamma = s$cs$gamma, eps = s$cs$eps, a = s$cs$a, b = s$cs$b))
}

# The settings of a layout of input affinities of n points: the user's, or
# the method's defaults (ne_methods()) for the gradient chosen, checked.
ne_affinity_settings <- function(a, n, has_data) {
  entry <- a$entry
  s <- list(grad_kind = ne_gradient_kind(a$gradient, a$method, n, a$n_components))
  s$sampled <- sampled <- s$grad_kind == "sampled"
  # the cost's own repulsion weight, and the weight of one sampled repulsion
  s$cost_gamma <- entry$cost_gamma(n)
  gamma <- if (is.null(a$gamma)) (if (sampled) entry$sampled_gamma else s$cost_gamma) else a$gamma
  s$gamma <- gamma
  s$cs <- ne_cost_settings(a$method, gamma = gamma, eps = a$eps, a = a$a, b = a$b,
                           weight = a$weight, alpha = a$alpha, spread = a$spread,
                           min_dist = a$min_dist)
  s$max_iter <- if (!is.null(a$max_iter)) a$max_iter else
    if (sampled) ne_sampled_epochs(n) else entry$max_iter
  s$init_sdev <- if (!is.null(a$init_sdev)) a$init_sdev else if (sampled) 2 else 1e-4
  # densMAP's term works in the last epochs, when the falling rate is low:
  # a higher rate gives it room (umap-learn runs 200 more epochs instead)
  densmap_on <- !is.null(a$dens) && a$dens$lambda > 0
  eta <- if (!is.null(a$eta)) a$eta else if (sampled) (if (densmap_on) 6 else 1) else entry$eta(n)
  exaggeration <- a$exaggeration
  if (sampled && !is.null(exaggeration) && !identical(exaggeration, 1)) {
    stop_arg("'exaggeration' is not used by gradient = \"sampled\" (leave it NULL or 1)")
  }
  if (is.null(exaggeration)) exaggeration <- if (sampled) 1 else entry$exaggeration
  # (checked before the default of stop_lying_iter reads it)
  s$exaggeration <- exaggeration <- check_number(exaggeration, "exaggeration", min = 0,
                                                 above = TRUE)
  stop_lying_iter <- a$stop_lying_iter
  if (is.null(stop_lying_iter)) stop_lying_iter <- if (exaggeration != 1) 250L else 0L
  s$eta <- check_number(eta, "eta", min = 0, above = TRUE)
  # t-SNE's default: n / exaggeration while the clusters are exaggerated
  s$eta_exaggerated <- if (a$method == "tsne" && is.null(a$eta)) n / exaggeration else s$eta
  s$stop_lying_iter <- check_whole(stop_lying_iter, "stop_lying_iter", min = 0)
  if (exaggeration != 1 && s$max_iter > 0 && s$max_iter < s$stop_lying_iter) {
    warning("'max_iter' (", s$max_iter, ") is below 'stop_lying_iter' (", s$stop_lying_iter,
            "): the run ends during early exaggeration, with the clusters still ",
            "exaggerated; raise 'max_iter' or lower 'stop_lying_iter'", call. = FALSE)
  }
  s$init <- if (!is.null(a$init)) a$init else entry$start(n, has_data)
  s
}

# The engine's layout of P from Y0 with the settings `s` (and the density
# term over the data's log radii, when asked for; the points in `order`, the
# callback shown them in the user's order, named by `row_names`): for
# "sampled" the
# cost is recorded at the end (every epoch from the start when verbose),
# from the sums of the full gradient, exact while they are cheap.
ne_affinity_layout <- function(Y0, P, s, a, n, row_names, P_access, data_radii = NULL,
                               order = NULL) {
  sampled <- s$sampled
  cost_kind <- if (a$n_components <= 2 && n > a$entry$cost_exact_max_n) "approx" else "exact"
  layout <- ne_layout_settings(
    if (sampled) "sampled" else "gradient_descent", s$max_iter,
    epoch = if (sampled && !a$verbose) 0L else a$epoch, rate = s$eta, callback = a$callback,
    callback_every = a$epoch, row_names = row_names, tol = a$tol,
    eta_exaggerated = s$eta_exaggerated, momentum = a$momentum,
    final_momentum = a$final_momentum, mom_switch_iter = a$mom_switch_iter,
    exaggeration = s$exaggeration, stop_lying_iter = s$stop_lying_iter, min_gain = a$min_gain,
    negative_sample_rate = a$negative_sample_rate, gamma = s$gamma,
    seed = if (sampled) step_seed(a$seed, "layout"),
    # (a sampled layout's start, spectral, can crowd most points into a few
    # of the grid's boxes, where the grid's cost costs minutes at 1e6 points:
    # the verbose records then begin after the first epoch of records)
    cost_at_start = !sampled || cost_kind == "exact")
  layout <- renumbered_callback(layout, order)
  ne_msg(a$verbose, "neighbor_embedding: optimizing (",
         if (sampled) "learning rate " else "eta ", signif(s$eta, 4), ", ", s$grad_kind,
         " gradient)")
  # the objective: the documented cost (for "sampled", with its own gamma,
  # for the costs recorded)
  cost <- s$cs
  if (sampled) cost$gamma <- s$cost_gamma
  cost <- ne_cost_list(cost, if (sampled) cost_kind else s$grad_kind)
  cost$density <- dens_cost_entry(a$dens, data_radii, s$max_iter, a$verbose)
  res <- .optimize_layout(Y0, P, cost, layout, a$n_threads, a$verbose, simd_option(), P_access)
  if (a$verbose && !sampled && !res$converged && s$max_iter > 0) {
    ne_msg(a$verbose, "neighbor_embedding: stopped at max_iter = ", s$max_iter, " without ",
           if (a$tol > 0) paste0("converging (relative cost change above tol = ", a$tol, ")")
           else "a convergence test (tol = 0)")
  }
  res
}

# The model of a layout of affinities, for neighbor_embedding_transform():
# with the index of the data (made here for small data whose affinities
# were over all pairs).
ne_affinity_model <- function(inputs, index, s, a, Y) {
  n <- inputs$n
  if (is.null(index) && !is.null(inputs$data)) {
    index <- ne_data_graph(inputs, ne_query_k(a$method, n, a$perplexity, a$n_neighbors) + 1L,
                           a$neighbors, a$n_threads, a$verbose, TRUE,
                           step_seed(a$seed, "index"))$index
  }
  cost <- if (s$sampled) utils::modifyList(s$cs, list(gamma = s$cost_gamma)) else s$cs
  ne_model(a$method, cost = cost, gradient = s$grad_kind, embedding = unname(Y), index = index,
           neighbors = a$neighbors, perplexity = a$perplexity, n_neighbors = a$n_neighbors,
           eta = s$eta, negative_sample_rate = a$negative_sample_rate, sample_gamma = s$gamma,
           pca = inputs$pca)
}
