#' Synthetic data sets for comparing neighbour graphs and embeddings
#'
#' Generators for the synthetic benchmarks that papers on t-SNE, UMAP,
#' TriMap and PaCMAP use to show how well an embedding keeps local and global
#' structure. They need no download and use R's random number generator, so
#' calling [set.seed()] first makes the result reproducible; they never set
#' or restore the seed themselves.
#'
#' Every generator returns a list with the same first two elements:
#' `X`, a numeric matrix with one row per point, and `label`, one value per
#' row for colouring plots: a number for the manifolds ([scurvehole()],
#' [swissroll()]), a factor for the cluster sets ([spheres()],
#' [hierarchical()]). Some add further elements, described on their pages.
#'
#' @name lsnn-data
#' @seealso [scurvehole()], [swissroll()], [spheres()], [hierarchical()], and
#'   [fashion_mnist()] for a real image data set read from local files.
#' @examples
#' set.seed(1)
#' sets <- list(scurvehole = scurvehole(500), swissroll = swissroll(500),
#'              spheres = spheres(n_spheres = 3, n_per_sphere = 50, n_outer = 100),
#'              hierarchical = hierarchical(n_per_cluster = 2))
#' # the same first two elements for every generator
#' t(sapply(sets, function(s) c(rows = nrow(s$X), columns = ncol(s$X),
#'                              labels = length(s$label))))
NULL

#' S-curve with a hole
#'
#' Samples `n` points uniformly on a 2-D S-shaped sheet in 3-D, then removes
#' those within `sqrt(0.3)` of the point (0, 1, 0), which sits at the middle of
#' the sheet. The hole tests whether an embedding keeps the sheet in one piece
#' while showing the gap. This is the "S-curve with a hole" of Wang et al.
#' (2021).
#'
#' The sheet is parametrised by a position `t` along the curve, uniform on
#' \eqn{[-3\pi/2, 3\pi/2]}, and a height `h`, uniform on \eqn{[0, 2]}:
#' \deqn{x = \sin t, \quad y = h, \quad z = \mathrm{sign}(t)(\cos t - 1).}{x = sin(t),  
#' y = h,   z = sign(t) (cos(t) - 1).}
#' The curve has unit speed in `t`, so the points are uniform on the sheet;
#' the ball of radius `sqrt(0.3)` cuts a patch of about 5% of its area, so the
#' number of rows returned is random, about `0.95 * n`. With `noise > 0`, Gaussian noise of
#' that standard deviation is added to each coordinate after the hole is cut.
#'
#' @param n Number of points sampled on the sheet before the hole is cut.
#' @param noise Standard deviation of Gaussian noise added to each coordinate.
#' @return A list with
#'   \item{X}{a numeric matrix with columns `x`, `y`, `z` and fewer than `n`
#'     rows;}
#'   \item{label}{numeric, each point's position `t` along the curve.}
#' @references
#' Wang, Y., Huang, H., Rudin, C., & Shaposhnik, Y. (2021). Understanding how
#' dimension reduction tools work: an empirical approach to deciphering t-SNE,
#' UMAP, TriMap, and PaCMAP for data visualization. *Journal of Machine
#' Learning Research*, 22(201), 1-73.
#' @seealso [lsnn-data] for the other generators.
#' @examples
#' set.seed(1)
#' s <- scurvehole(2000)
#' nrow(s$X)
#' col <- hcl.colors(64)[cut(s$label, 64)]
#' op <- par(mfrow = c(1, 2))
#' plot(s$X[, "x"], s$X[, "z"], col = col, pch = 20, cex = 0.5, asp = 1,
#'      main = "the S")
#' plot(s$label, s$X[, "y"], col = col, pch = 20, cex = 0.5, asp = 1,
#'      xlab = "t", ylab = "y", main = "the sheet unrolled")
#' par(op)
#' @export
scurvehole <- function(n = 10000, noise = 0) {
  n <- check_whole(n, "n", min = 1)
  noise <- check_number(noise, "noise", min = 0)
  check_fits_memory(4 * as.numeric(n), "n")  # the coordinates and the label
  t <- 3 * pi * (stats::runif(n) - 0.5)
  h <- 2 * stats::runif(n)
  X <- cbind(x = sin(t), y = h, z = sign(t) * (cos(t) - 1))
  keep <- (X[, "x"]^2 + (X[, "y"] - 1)^2 + X[, "z"]^2) > 0.3
  X <- X[keep, , drop = FALSE]
  X <- add_noise(X, noise)
  list(X = X, label = t[keep])
}

#' Swiss roll
#'
#' Samples `n` points uniformly in the parameters of the classic swiss roll, a
#' rectangle rolled up into a spiral in 3-D (Tenenbaum et al., 2000; Roweis and
#' Saul, 2000). Points that are close in 3-D across neighbouring turns of the
#' roll are far apart along the sheet, which is what an embedding should see.
#'
#' The roll parameter `t` is uniform on \eqn{[3\pi/2, 9\pi/2]} (one and a half
#' turns) and the height `h` uniform on \eqn{[0, 21]}:
#' \deqn{x = t \cos t, \quad y = h, \quad z = t \sin t.}{x = t cos(t),   y = h,   z = t
#' sin(t).}
#' As `t` is sampled uniformly rather than by arc length, the outer turn is
#' sampled more sparsely than the inner one.
#'
#' @param n Number of points.
#' @param noise Standard deviation of Gaussian noise added to each coordinate.
#' @return A list with
#'   \item{X}{a numeric matrix with `n` rows and columns `x`, `y`, `z`;}
#'   \item{label}{numeric, the roll parameter `t` of each point.}
#' @references
#' Tenenbaum, J. B., de Silva, V., & Langford, J. C. (2000). A global
#' geometric framework for nonlinear dimensionality reduction. *Science*,
#' 290(5500), 2319-2323.
#'
#' Roweis, S. T., & Saul, L. K. (2000). Nonlinear dimensionality reduction by
#' locally linear embedding. *Science*, 290(5500), 2323-2326.
#' @seealso [lsnn-data] for the other generators.
#' @examples
#' set.seed(1)
#' r <- swissroll(2000)
#' plot(r$X[, "x"], r$X[, "z"], col = hcl.colors(64)[cut(r$label, 64)],
#'      pch = 20, cex = 0.5, asp = 1)
#' @export
swissroll <- function(n = 10000, noise = 0) {
  n <- check_whole(n, "n", min = 1)
  noise <- check_number(noise, "noise", min = 0)
  check_fits_memory(4 * as.numeric(n), "n")  # the coordinates and the label
  t <- 1.5 * pi * (1 + 2 * stats::runif(n))
  h <- 21 * stats::runif(n)
  X <- cbind(x = t * cos(t), y = h, z = t * sin(t))
  list(X = add_noise(X, noise), label = t)
}

#' Small spheres inside a large sphere
#'
#' The "spheres" data set of the topological autoencoders paper (Moor et al.,
#' 2020): `n_spheres` small spheres, each a (`dim` - 1)-sphere of radius
#' `radius` in `dim` dimensions, all enclosed in one large sphere of
#' radius `outer_radius` centred at the origin. Each small sphere's centre
#' has independent normal coordinates of mean 0 and standard deviation
#' `shift_sd`, so the
#' small spheres are about `shift_sd * sqrt(2 * dim)` apart (about 14 at the
#' defaults) and well inside the large one. An embedding that keeps global
#' structure should show the small spheres as clusters surrounded by the
#' large one.
#'
#' Points are uniform on each sphere (normalised Gaussian vectors). The
#' defaults reproduce the paper's set: ten spheres of radius 5 with 500 points
#' each in 101 dimensions, and 5000 points on a sphere of radius 25, 10,000
#' points in all. The paper's code draws the centres with standard deviation
#' `10 / sqrt(dim - 1)`, which is 1 for 101 dimensions: pass `shift_sd` to
#' follow that rule in other dimensions.
#'
#' @param n_spheres Number of small spheres.
#' @param n_per_sphere Number of points on each small sphere.
#' @param dim Dimension of the space the spheres lie in (the spheres themselves
#'   have dimension `dim - 1`).
#' @param radius Radius of the small spheres.
#' @param n_outer Number of points on the large sphere; may be 0.
#' @param outer_radius Radius of the large sphere.
#' @param shift_sd Standard deviation of each coordinate of the small spheres'
#'   centres.
#' @return A list with
#'   \item{X}{a numeric matrix with `n_spheres * n_per_sphere + n_outer` rows
#'     and `dim` columns: the small spheres' points in order, then the large
#'     sphere's;}
#'   \item{label}{a factor giving each point's sphere, with levels `"1"`, ...,
#'     `n_spheres` for the small spheres and `"outer"` for the large one;}
#'   \item{centers}{the `n_spheres` x `dim` matrix of the small spheres'
#'     centres.}
#' @references
#' Moor, M., Horn, M., Rieck, B., & Borgwardt, K. (2020). Topological
#' autoencoders. In *Proceedings of the 37th International Conference on
#' Machine Learning (ICML)*, PMLR 119, 7045-7054.
#' @seealso [lsnn-data] for the other generators.
#' @examples
#' set.seed(1)
#' s <- spheres(n_per_sphere = 50, n_outer = 500)
#' dim(s$X)
#' table(s$label)
#' @export
spheres <- function(n_spheres = 10, n_per_sphere = 500, dim = 101,
                    radius = 5, n_outer = 5000, outer_radius = 25,
                    shift_sd = 1) {
  n_spheres <- check_whole(n_spheres, "n_spheres", min = 1)
  n_per_sphere <- check_whole(n_per_sphere, "n_per_sphere", min = 1)
  dim <- check_whole(dim, "dim", min = 2)
  n_outer <- check_whole(n_outer, "n_outer", min = 0)
  radius <- check_number(radius, "radius", min = 0, above = TRUE)
  outer_radius <- check_number(outer_radius, "outer_radius", min = 0, above = TRUE)
  shift_sd <- check_number(shift_sd, "shift_sd", min = 0)
  check_fits_memory((as.numeric(n_spheres) * n_per_sphere + n_outer) * dim,
                    if (n_outer > as.numeric(n_spheres) * n_per_sphere) "n_outer" else "n_per_sphere")

  centers <- matrix(stats::rnorm(n_spheres * dim, sd = shift_sd),
                    nrow = n_spheres, ncol = dim)
  small <- sphere_points(n_spheres * n_per_sphere, dim, radius)
  small <- small + centers[rep(seq_len(n_spheres), each = n_per_sphere), ,
                           drop = FALSE]
  outer <- sphere_points(n_outer, dim, outer_radius)
  levels <- c(as.character(seq_len(n_spheres)), "outer")
  label <- factor(c(rep(levels[seq_len(n_spheres)], each = n_per_sphere),
                    rep("outer", n_outer)), levels = levels)
  list(X = rbind(small, outer), label = label, centers = centers)
}

#' Nested Gaussian clusters
#'
#' The synthetic hierarchical data set of Wang et al. (2021): `n_macro` macro
#' clusters, each made of `n_meso` meso clusters, each made of `n_micro` micro
#' clusters of `n_per_cluster` points, in `dim` dimensions (5 x 5 x 5 clusters
#' in 50 dimensions by default). An embedding that keeps global structure
#' should show the three levels at once: micro clusters grouped into meso
#' clusters, grouped in turn into macro clusters.
#'
#' Each level is a Gaussian around the level above, with spreads that shrink
#' level by level. With the default `sd`, macro centres have independent
#' coordinates of variance 10,000 around the origin, meso centres variance
#' 1,000 around their macro centre, micro centres variance 100 around their
#' meso centre, and points variance 10 around their micro centre, as in the
#' published recipe. The defaults give 62,500 points; use a smaller
#' `n_per_cluster` for quick looks.
#'
#' @param n_per_cluster Number of points in each micro cluster.
#' @param dim Number of dimensions.
#' @param n_macro,n_meso,n_micro Number of macro clusters, of meso clusters in
#'   each macro cluster, and of micro clusters in each meso cluster.
#' @param sd Four standard deviations, largest first: of the macro centres'
#'   coordinates, of the meso centres around their macro centre, of the micro
#'   centres around their meso centre, and of the points around their micro
#'   centre.
#' @return A list with
#'   \item{X}{a numeric matrix with `n_macro * n_meso * n_micro *
#'     n_per_cluster` rows and `dim` columns, ordered by macro, then meso, then
#'     micro cluster;}
#'   \item{label}{a factor, the macro cluster of each point (levels `"1"`,
#'     `"2"`, ...);}
#'   \item{meso}{a factor, the meso cluster of each point, named after its
#'     path in the hierarchy (`"2.4"` is the fourth meso cluster of macro
#'     cluster 2);}
#'   \item{micro}{a factor, the micro cluster of each point, named likewise
#'     (`"2.4.1"`).}
#' @references
#' Wang, Y., Huang, H., Rudin, C., & Shaposhnik, Y. (2021). Understanding how
#' dimension reduction tools work: an empirical approach to deciphering t-SNE,
#' UMAP, TriMap, and PaCMAP for data visualization. *Journal of Machine
#' Learning Research*, 22(201), 1-73.
#' @seealso [lsnn-data] for the other generators.
#' @examples
#' set.seed(1)
#' h <- hierarchical(n_per_cluster = 10)
#' dim(h$X)
#' nlevels(h$micro)
#' plot(h$X[, 1], h$X[, 2], col = h$label, pch = 20, cex = 0.5)
#' @export
hierarchical <- function(n_per_cluster = 500, dim = 50, n_macro = 5,
                         n_meso = 5, n_micro = 5,
                         sd = c(100, sqrt(1000), 10, sqrt(10))) {
  n_per_cluster <- check_whole(n_per_cluster, "n_per_cluster", min = 1)
  dim <- check_whole(dim, "dim", min = 1)
  n_macro <- check_whole(n_macro, "n_macro", min = 1)
  n_meso <- check_whole(n_meso, "n_meso", min = 1)
  n_micro <- check_whole(n_micro, "n_micro", min = 1)
  if (!is.numeric(sd) || length(sd) != 4 || anyNA(sd) || any(sd < 0) ||
      any(!is.finite(sd))) {
    stop_arg("'sd' must be four finite non-negative numbers")
  }
  check_fits_memory(as.numeric(n_macro) * n_meso * n_micro * n_per_cluster * dim,
                    "n_per_cluster")

  # Each level's centres are the parent's centre (row repeated) plus noise.
  spread <- function(parent, times, s) {
    child <- parent[rep(seq_len(nrow(parent)), each = times), , drop = FALSE]
    child + stats::rnorm(length(child), sd = s)
  }
  macro <- matrix(stats::rnorm(n_macro * dim, sd = sd[1]), n_macro, dim)
  meso <- spread(macro, n_meso, sd[2])
  micro <- spread(meso, n_micro, sd[3])
  X <- spread(micro, n_per_cluster, sd[4])

  i_macro <- seq_len(n_macro)
  i_meso <- seq_len(n_meso)
  i_micro <- seq_len(n_micro)
  meso_names <- paste(rep(i_macro, each = n_meso), i_meso, sep = ".")
  micro_names <- paste(rep(meso_names, each = n_micro), i_micro, sep = ".")
  per_macro <- n_meso * n_micro * n_per_cluster
  list(
    X = X,
    label = factor(rep(i_macro, each = per_macro), levels = i_macro),
    meso = factor(rep(meso_names, each = n_micro * n_per_cluster),
                  levels = meso_names),
    micro = factor(rep(micro_names, each = n_per_cluster),
                   levels = micro_names)
  )
}

# n points uniform on the sphere of radius r about the origin in dim
# dimensions: Gaussian vectors scaled to length r.
sphere_points <- function(n, dim, r) {
  Z <- matrix(stats::rnorm(n * dim), nrow = n, ncol = dim)
  Z * (r / sqrt(rowSums(Z^2)))
}

add_noise <- function(X, noise) {
  if (noise > 0) {
    X <- X + stats::rnorm(length(X), sd = noise)
  }
  X
}
