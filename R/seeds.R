# Seeds: every random step of lsnn draws its seed from R's generator here,
# so that set.seed() (or a function's `seed` argument) reproduces a run.

# The seed of the core's generators, drawn from R's so that set.seed()
# reproduces a run: two non-negative 31-bit integers, which the glue joins
# into one 64-bit seed (src/r_inputs.h). Every random step of lsnn takes its
# seed here.
draw_seed <- function() {
  sample.int(.Machine$integer.max, 2L) - 1L
}

# The seed of one step of a larger random computation, as draw_seed() gives
# seeds: the core's hash (hash64() of random.h, the way the core seeds its
# work items) of a seed of draw_seed() and up to three whole numbers naming
# the step, so that a step's numbers depend on the computation's seed and
# on which step it is, not on when or where it runs.
derive_seed <- function(seed, ...) .derive_seed(seed, as.double(c(...)))

# The random steps of one call, each numbered for step_seed(): a call of an
# exported function draws one seed (draw_seed()) first thing, and hands each
# step the seed derived from it, so that a step's numbers do not depend on
# which other steps ran before it (a search that happens to be exact draws
# nothing, and the start drawn from R's generator after it stays the same).
call_steps <- c(graph = 1, target_graph = 2, layout = 3, pairs = 4, index = 5, query = 6)

# The seed of the step named `step` (of call_steps) of the call whose seed is
# `seed`, of draw_seed()'s form.
step_seed <- function(seed, step) derive_seed(seed, call_steps[[step]])

# The same as a whole number, for the `seed` argument of an exported function
# that a step calls (which then draws its own seeds under set.seed() of it).
step_seed_number <- function(seed, step) step_seed(seed, step)[[1]]

# `m` distinct rows of 1..n in increasing order, drawn from a seed of
# draw_seed() (without R's generator).
sample_rows <- function(seed, n, m) .sample_rows(seed, as.double(n), as.double(m))

# Evaluates expr after set.seed(seed) (unless seed is NULL) and puts R's
# generator back as it was.
with_seed <- function(seed, expr) {
  genv <- globalenv()
  old_seed <- if (exists(".Random.seed", genv, inherits = FALSE)) get(".Random.seed", genv)
  on.exit({
    if (is.null(old_seed)) {
      if (exists(".Random.seed", genv, inherits = FALSE)) rm(".Random.seed", envir = genv)
    } else {
      assign(".Random.seed", old_seed, envir = genv)
    }
  })
  if (!is.null(seed)) set.seed(seed)
  expr
}

# The `seed` argument of the functions that draw random numbers: the function
# called again without it, under set.seed(seed), with R's generator put back
# afterwards, so that the result depends on the seed alone (every random step
# draws from R's generator: the core's seeds through draw_seed(), the
# eigensolvers' and starts' random vectors directly) and the user's stream is
# untouched. Called first thing in the function, as
#   with_seed_of_call(seed, match.call(), sys.function(), parent.frame())
# The arguments the caller supplied are promises of the caller's; they are
# forced here, in the function's own frame (parent.frame() of this one), so
# that R evaluates them as it would without `seed`: once, in the caller's
# frame, with the caller's generator. The second call gets their values
# through a small environment of its own (its call holds only their names, so
# an error or a traceback does not print the data); arguments left missing
# stay missing, and default ones are evaluated by the second call. `env` (the
# caller's frame) is not needed: nothing of the call is evaluated again.
with_seed_of_call <- function(seed, call, fun, env) {
  seed <- check_whole(seed, "seed", min = -big_int, max = big_int)
  frame <- parent.frame()
  values <- new.env(parent = baseenv())
  args <- list()
  for (name in setdiff(names(formals(fun)), "seed")) {
    if (name == "...") {
      dots <- eval(quote(list(...)), frame)
      slots <- sprintf(".lsnn_dot%d", seq_along(dots))
      for (i in seq_along(dots)) assign(slots[i], dots[[i]], envir = values)
      args <- c(args, stats::setNames(lapply(slots, as.name), names(dots)))
    } else if (!eval(call("missing", as.name(name)), frame)) {
      assign(name, get(name, envir = frame, inherits = FALSE), envir = values)
      args[[name]] <- as.name(name)
    }
  }
  # the function under the name it was called by, where that is a plain name
  fun_name <- if (is.name(call[[1]])) as.character(call[[1]]) else ".lsnn_function"
  if (fun_name %in% names(args)) fun_name <- ".lsnn_function"
  assign(fun_name, fun, envir = values)
  with_seed(seed, eval(as.call(c(as.name(fun_name), args)), values))
}
