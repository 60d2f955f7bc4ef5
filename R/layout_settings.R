# The layout's settings as the glue reads them, the user's callback, and the
# approximation's grid option.

# The layout settings as the glue reads them (layout_settings() of
# src/r_driver.h; src/pacmap.cpp reads PaCMAP's schedule from them too),
# the one place they are built: the
# stepper ("gradient_descent", "sampled" or "adam"), max_iter, epoch
# (steps between cost records; 0: the final cost alone), `rate` (the step
# size eta, or the learning rate), the callback (called every
# callback_every steps with the layout, its rows named `row_names`), and
# the stepper's own settings, whose defaults are neighbor_embedding()'s (and,
# for "adam", those of placing new points: a constant last phase); "sampled"
# takes the `seed` its caller gives (step_seed()). `cost_at_start`: whether
# the cost records begin with the start's.
ne_layout_settings <- function(stepper, max_iter, epoch, rate, callback = NULL,
                               callback_every = epoch, row_names = NULL, tol = 1e-7,
                               eta_exaggerated = rate, momentum = 0.5, final_momentum = 0.8,
                               mom_switch_iter = 250L, exaggeration = 1, stop_lying_iter = 0L,
                               min_gain = 0.01, negative_sample_rate = 5L, gamma = 1,
                               phases = c(0L, 0L, max_iter), local = FALSE,
                               low_dist_thres = 10, constant = TRUE, seed = NULL,
                               cost_at_start = TRUE) {
  driver <- list(stepper = stepper, max_iter = as.integer(max_iter), epoch = as.integer(epoch),
                 callback = ne_callback(callback, row_names, max_iter),
                 callback_every = as.integer(callback_every), cost_at_start = cost_at_start)
  c(driver, switch(stepper,
    gradient_descent = list(tol = tol, eta = rate, eta_exaggerated = eta_exaggerated,
                            momentum = momentum, final_momentum = final_momentum,
                            mom_switch_iter = mom_switch_iter, exaggeration = exaggeration,
                            stop_lying_iter = stop_lying_iter, min_gain = min_gain),
    sampled = list(learning_rate = rate, negative_sample_rate = negative_sample_rate,
                   gamma = gamma, seed = seed),
    adam = list(learning_rate = rate, phases = as.integer(phases), local = local,
                low_dist_thres = low_dist_thres, constant = constant)
  ))
}

# `callback` of neighbor_embedding() and neighbor_embedding_transform():
# NULL or a function of two arguments, (iteration, Y), or of three, uwot's
# (epoch, n_epochs, Y). Its form is checked here, before the run, so that a
# wrong one is not found at the first call.
check_callback <- function(callback) {
  if (is.null(callback)) return(NULL)
  if (!is.function(callback)) {
    stop_arg("'callback' must be a function(iteration, Y), a function(epoch, n_epochs, Y) ",
             "as uwot's epoch_callback, or NULL (it is ", what_is(callback), ")")
  }
  callback_arity(callback)
  callback
}

# How a callback is called: 2 (iteration, Y) or 3 (epoch, n_epochs, Y), from
# its formal arguments; a function of `...` alone takes the two.
callback_arity <- function(callback) {
  f <- formals(if (is.primitive(callback)) args(callback) else callback)
  named <- setdiff(names(f), "...")
  dots <- "..." %in% names(f)
  if (length(named) == 3) return(3L)
  if (length(named) == 2 || (dots && length(named) < 2)) return(2L)
  stop_arg("'callback' must take two arguments, (iteration, Y), or three as uwot's ",
           "epoch_callback, (epoch, n_epochs, Y); it takes ", length(named),
           if (length(named) > 0) paste0(" (", paste(named, collapse = ", "), ")"))
}

# The callback as the glue calls it (src/r_driver.h): function(iteration, Y)
# with Y the layout so far (an n x d matrix, the points' row names added),
# returning TRUE when the user's callback returned FALSE, which stops the
# run. The user's callback gets uwot's (epoch, n_epochs, Y) when it takes
# three arguments. An error in the callback stops the run with an error
# that names it.
ne_callback <- function(callback, row_names, max_iter) {
  if (is.null(callback)) return(NULL)
  three <- callback_arity(callback) == 3L
  function(iteration, Y) {
    if (!is.null(row_names)) rownames(Y) <- row_names
    out <- tryCatch(if (three) callback(iteration, max_iter, Y) else callback(iteration, Y),
                    error = function(e) {
      if (is_time_limit(e)) stop(e)
      stop_arg("'callback' failed at iteration ", iteration, ": ", conditionMessage(e))
    })
    isFALSE(out)
  }
}

# The approximation's grid from the option lsnn.grid (for measurements; see
# ?cost_gradient): NULL when unset (the core's defaults), else the named
# list of every field, those not given taken from the default grid of the
# cost `kind` (ne_cost_settings()'s method: "tsne", "largevis",
# "largevis_exp", "umap"). Each field is checked against what the core
# (src/costs.cpp, inst/include/lsnn/farfield/) makes of it, so that no
# accepted value asks for an absurd grid: the interpolation nodes per box
# (at most 32, the core's limit) times the minimum boxes per dimension at
# most 2,048 nodes per dimension (the finest grid the planner refines to);
# the boxes that points_per_box asks for at most 4 grid nodes per point; a
# near field at most 8 boxes deep. The box width sets the boxes from the
# layout's range, which the core caps at 6,000 nodes per dimension.
ne_grid_option <- function(kind) {
  g <- getOption("lsnn.grid")
  if (is.null(g)) return(NULL)
  fields <- ne_grid_fields()
  bad <- function(...) stop("option 'lsnn.grid' ", ..., " (see ?cost_gradient)", call. = FALSE)
  if (!(is.list(g) || is.atomic(g)) || length(g) == 0 || is.null(names(g)) ||
      anyNA(names(g)) || any(names(g) == "")) {
    bad("must be NULL or a named list of grid fields (", paste(fields, collapse = ", "), ")")
  }
  unknown <- setdiff(names(g), fields)
  if (length(unknown) > 0) {
    bad("has an unknown field '", unknown[1], "'; its fields are ", paste(fields, collapse = ", "))
  }
  twice <- names(g)[duplicated(names(g))]
  if (length(twice) > 0) bad("names the field '", twice[1], "' twice")
  grid <- utils::modifyList(.far_field_defaults(kind), as.list(g))
  field <- function(name, ok, what) {
    if (!name %in% names(g)) return(invisible())
    x <- g[[name]]
    if (!(is.numeric(x) || is.logical(x)) || length(x) != 1 || is.na(x) || !ok(as.numeric(x))) {
      bad("has field '", name, "' = ", show_value(x), "; it must be ", what)
    }
  }
  whole_in <- function(lo, hi) function(x) is_scalar_number(x, min = lo, max = hi, whole = TRUE)
  flag <- function(x) x %in% c(0, 1)
  non_negative <- function(x) is_scalar_number(x, min = 0)
  nodes <- as.numeric(grid$nodes)
  field("nodes", whole_in(1, 32), "a whole number from 1 to 32")
  field("box_width", function(x) x >= 0.05, "at least 0.05 (Inf: the boxes follow the points)")
  max_boxes <- floor(2048 / nodes)
  field("min_boxes", whole_in(1, max_boxes),
        paste0("a whole number from 1 to ", max_boxes, " (at most 2,048 nodes per dimension ",
               "with ", nodes, " nodes per box)"))
  field("near_field", flag, "TRUE or FALSE")
  min_points <- nodes^2 / 4
  field("points_per_box", function(x) x == 0 || (is.finite(x) && x >= min_points),
        paste0("0 or at least nodes^2 / 4 = ", show_value(min_points),
               " (at most 4 grid nodes per point)"))
  field("near_boxes", whole_in(1, 8), "a whole number from 1 to 8")
  field("pair_weight", non_negative, "a finite number of at least 0")
  field("smooth_width", non_negative, "a finite number of at least 0")
  field("by_components", flag, "TRUE or FALSE")
  field("shallow_width", non_negative, "a finite number of at least 0")
  field("fine_nodes", whole_in(0, 32), "a whole number from 0 to 32")
  field("fine_smooth_width", non_negative, "a finite number of at least 0")
  field("memory_mb", function(x) is.finite(x) && x >= 1, "a finite number of at least 1")
  # a field left to its default may not fit the fields given
  if (!"min_boxes" %in% names(g) && grid$min_boxes > max_boxes) {
    bad("has nodes = ", nodes, ", too many for the default min_boxes = ", grid$min_boxes)
  }
  if (!"points_per_box" %in% names(g) && grid$points_per_box != 0 &&
      grid$points_per_box < min_points) {
    bad("has nodes = ", nodes, ", too many for the default points_per_box = ",
        grid$points_per_box, " (give points_per_box of at least ", show_value(min_points), ")")
  }
  list(nodes = as.integer(grid$nodes), box_width = as.numeric(grid$box_width),
       min_boxes = as.integer(grid$min_boxes), near_field = as.logical(grid$near_field),
       points_per_box = as.numeric(grid$points_per_box),
       near_boxes = as.integer(grid$near_boxes), pair_weight = as.numeric(grid$pair_weight),
       smooth_width = as.numeric(grid$smooth_width),
       by_components = as.logical(grid$by_components),
       shallow_width = as.numeric(grid$shallow_width), fine_nodes = as.integer(grid$fine_nodes),
       fine_smooth_width = as.numeric(grid$fine_smooth_width),
       memory_mb = as.numeric(grid$memory_mb))
}

# The fields of options(lsnn.grid), in the order ?cost_gradient lists them.
ne_grid_fields <- function() {
  c("nodes", "box_width", "min_boxes", "near_field", "points_per_box", "near_boxes",
    "pair_weight", "smooth_width", "by_components", "shallow_width", "fine_nodes",
    "fine_smooth_width", "memory_mb")
}
