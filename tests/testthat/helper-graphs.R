# Exact k-nearest neighbour graphs in base R for the embedding tests: k
# columns, the point itself first, each row by increasing distance.
exact_graph <- function(X, k) {
  D <- as.matrix(stats::dist(X))
  n <- nrow(D)
  idx <- matrix(0L, n, k)
  dist <- matrix(0, n, k)
  for (i in seq_len(n)) {
    o <- order(D[i, ])
    o <- c(i, setdiff(o, i))[seq_len(k)]
    idx[i, ] <- o
    dist[i, ] <- D[i, o]
  }
  list(idx = idx, dist = dist)
}

# Well-separated Gaussian clusters: n_per points around each of `centres`
# rows (far apart relative to the unit spread).
far_clusters <- function(n_per = 30, dim = 5, sep = 50, n_clusters = 3) {
  centres <- diag(sep, n_clusters, dim)
  X <- do.call(rbind, lapply(seq_len(n_clusters), function(c) {
    sweep(matrix(stats::rnorm(n_per * dim), n_per, dim), 2, centres[c, ], "+")
  }))
  list(X = X, label = rep(seq_len(n_clusters), each = n_per))
}

# Coordinates with no two points close (for finite differences).
spread_coords <- function(n, d) {
  Y <- matrix(stats::rnorm(n * d, sd = 2), n, d)
  Y
}

# Central finite-difference gradient of f at Y.
fd_gradient <- function(f, Y, h = 1e-5) {
  G <- Y
  for (k in seq_along(Y)) {
    Yp <- Y
    Ym <- Y
    Yp[k] <- Yp[k] + h
    Ym[k] <- Ym[k] - h
    G[k] <- (f(Yp) - f(Ym)) / (2 * h)
  }
  G
}

# Every cluster's points are nearer to each other than to any other cluster.
clusters_apart <- function(Y, label) {
  D <- as.matrix(stats::dist(Y))
  same <- outer(label, label, "==")
  diag(D) <- NA
  max_within <- max(D[same], na.rm = TRUE)
  min_between <- min(D[!same])
  min_between > max_within
}

# X written as shards of rows_per_shard rows and its exact sharded LSNN graph
# (11 neighbours among 20 extra), each in a new temporary directory.
# Returns list(shards, graph, dirs); the caller removes `dirs`.
sharded_lsnn_case <- function(X, rows_per_shard) {
  dirs <- c(tempfile("shards"), tempfile("graph"))
  shards <- write_shards(X, dirs[1], rows_per_shard = rows_per_shard)
  list(shards = shards,
       graph = locally_scaled_knn_sharded(shards, n_neighbors = 11, n_extra = 20,
                                          nn_kind = "exact", out_dir = dirs[2]),
       dirs = dirs)
}
