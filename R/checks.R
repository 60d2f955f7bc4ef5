# Argument checks shared by every exported function. Each check stops with a
# message that names the argument first ('k' must be ...), without the
# internal call, and returns the value in the type the code below it needs.
# The rules are the same everywhere: counts are whole numbers (never
# truncated), real parameters finite, flags TRUE or FALSE (not NA), and a
# range is stated in the message with the value given.

stop_arg <- function(...) stop(..., call. = FALSE)

big_int <- .Machine$integer.max

# How a value is shown in a message: numbers in full up to 15 digits.
show_value <- function(x) {
  if (is.numeric(x) && length(x) == 1) format(x, digits = 15) else deparse(x)[1]
}

# A whole number in [min, max], returned as an integer. Counts that lsnn
# caps anyway (neighbours, extra neighbours) use clamp = TRUE: any larger
# whole number becomes `max` (by default the largest integer).
check_whole <- function(x, name, min = -Inf, max = big_int, clamp = FALSE) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) || x != round(x)) {
    stop_arg("'", name, "' must be a single whole number",
             if (is.numeric(x) && length(x) == 1 && is.finite(x)) {
               paste0(" (it is ", show_value(x), ")")
             })
  }
  if (x < min) stop_arg("'", name, "' must be at least ", min, " (it is ", show_value(x), ")")
  if (x > max) {
    if (clamp) return(as.integer(max))
    stop_arg("'", name, "' must be at most ", show_value(max), " (it is ", show_value(x), ")")
  }
  as.integer(x)
}

# A number of samples: a whole number of at least 1, possibly beyond the
# integer range; returned as a double.
check_sample_size <- function(x, name, max = Inf) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) || x != round(x) || x < 1) {
    stop_arg("'", name, "' must be a whole number of at least 1",
             if (is.numeric(x) && length(x) == 1 && is.finite(x)) {
               paste0(" (it is ", show_value(x), ")")
             })
  }
  if (x > max) {
    stop_arg("'", name, "' must be at most ", format(max, scientific = FALSE), " (it is ",
             show_value(x), ")")
  }
  as.numeric(x)
}

# A single finite number in a range; `above`/`below` make a bound strict.
check_number <- function(x, name, min = -Inf, max = Inf, above = FALSE, below = FALSE) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x)) {
    stop_arg("'", name, "' must be a single finite number")
  }
  low <- if (above) x <= min else x < min
  high <- if (below) x >= max else x > max
  if (low || high) {
    range <- if (is.finite(min) && is.finite(max)) {
      paste0("between ", min, " and ", max, if (above || below) " (exclusive)")
    } else if (is.finite(min)) {
      if (above && min == 0) "positive" else if (above) paste("greater than", min) else
        paste("at least", min)
    } else {
      if (below) paste("less than", max) else paste("at most", max)
    }
    stop_arg("'", name, "' must be ", range, " (it is ", show_value(x), ")")
  }
  as.double(x)
}

check_flag <- function(x, name) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) stop_arg("'", name, "' must be TRUE or FALSE")
  x
}

# Whether x is a single finite number of at least `min` (greater with
# above = TRUE) and at most `max`, and with whole = TRUE a whole number: the
# test of the numbers stored in lsnn's own objects (indexes, models), whose
# checks say what each element should be.
is_scalar_number <- function(x, min = -Inf, max = Inf, above = FALSE, whole = FALSE) {
  is.numeric(x) && length(x) == 1 && is.finite(x) && (if (above) x > min else x >= min) &&
    x <= max && (!whole || x == round(x))
}

# A numeric option of lsnn, checked where it is read: `default` when unset,
# else a single number of at least `min` (Inf allowed); the error names the
# option and the help page that documents it.
number_option <- function(name, default, min = 0, help) {
  x <- getOption(name)
  if (is.null(x)) return(default)
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x < min) {
    stop("option '", name, "' must be a single number of at least ", min, " (it is ",
         what_is(x), "); see ?", help, call. = FALSE)
  }
  as.double(x)
}

# Whether x is a single string among `choices`.
is_word <- function(x, choices) {
  is.character(x) && length(x) == 1 && !is.na(x) && x %in% choices
}

# What x is, for a message about an element of the wrong kind: a scalar's
# value, else its type and dimensions ("a 149 x 2 double matrix").
what_is <- function(x) {
  if (is.null(x)) return("missing")
  if (is.null(dim(x)) && length(x) == 1 && (is.numeric(x) || is.logical(x))) return(show_value(x))
  if (is.null(dim(x)) && length(x) == 1 && is.character(x)) return(paste0('"', x, '"'))
  d <- dim(x)
  kind <- if (isS4(x)) class(x)[1] else if (is.matrix(x)) paste(typeof(x), "matrix") else
    paste(typeof(x), if (is.list(x)) "" else "vector")
  paste0("a ", if (!is.null(d)) paste0(paste(d, collapse = " x "), " "), trimws(kind),
         if (is.null(d)) paste0(" of length ", length(x)))
}

# A saved object's format version, compared as a number (1L and 1 are the
# same version): `damaged(...)` stops when it is not a number at all, a
# number other than `current` stops with `remedy`.
check_format_version <- function(version, current, name, damaged, remedy) {
  if (!is.numeric(version) || length(version) != 1 || is.na(version)) {
    damaged("'", name, "$format_version' must be a number (it is ",
            if (is.null(version)) "missing" else show_value(version), ")")
  }
  if (version != current) {
    stop_arg("'", name, "' has format version ", show_value(version), "; this version of lsnn ",
             "reads version ", current, ": ", remedy)
  }
  invisible(version)
}

# ret_extra of neighbor_embedding(): TRUE/FALSE, or as in uwot the names of
# the extras wanted, from `allowed`; of these, `method` (the method's name
# for the message) returns only `returned`.
check_ret_extra <- function(x, allowed = c("nn", "P", "fgraph"), returned = allowed,
                            method = NULL) {
  if (is.character(x)) {
    if (length(x) == 0 || anyNA(x)) stop_arg("'ret_extra' must be TRUE, FALSE or names of extras")
    unknown <- setdiff(x, allowed)
    if (length(unknown) > 0) {
      stop_arg("'ret_extra' asks for ", paste0('"', unknown, '"', collapse = ", "),
               ", which lsnn does not return",
               if ("model" %in% unknown) " (it keeps no model to embed new data)",
               "; it can return ", paste0('"', allowed, '"', collapse = ", "),
               ", or TRUE for all details")
    }
    other <- setdiff(x, returned)
    if (length(other) > 0) {
      stop_arg("'ret_extra' asks for ", paste0('"', other, '"', collapse = ", "),
               ", which method = \"", method, "\" does not return; it can return ",
               paste0('"', returned, '"', collapse = ", "), ", or TRUE for all details")
    }
    return(unique(x))
  }
  check_flag(x, "ret_extra")
}

check_choice <- function(x, name, choices) {
  if (!is.character(x) || length(x) != 1 || !x %in% choices) {
    stop_arg("'", name, "' must be one of ", paste0('"', choices, '"', collapse = ", "))
  }
  x
}

# The metrics of the neighbour searches (and of the quality measures' data).
knn_metrics <- c("euclidean", "cosine", "correlation", "manhattan", "hamming")

check_n_threads <- function(n_threads) {
  if (is.null(n_threads)) return(default_n_threads())
  # 0 runs on the calling thread only, as 1 does.
  max(check_whole(n_threads, "n_threads", min = 0), 1L)
}

all_finite <- function(x) {
  length(x) == 0 || (is.finite(min(x)) && is.finite(max(x)))
}

# Generated data that cannot fit in memory is an error naming the argument:
# on Linux, where a large allocation may succeed at first and the kernel then
# ends R when the pages are touched, against the machine's total memory (from
# /proc/meminfo); elsewhere R's own "cannot allocate" error is left to speak.
check_fits_memory <- function(n_values, name) {
  bytes <- 8 * n_values
  total <- machine_memory_bytes()
  if (!is.na(total) && bytes > total) {
    stop_arg(sprintf("'%s' asks for %.3g GB of data, more than this machine's memory (%.3g GB)",
                     name, bytes / 1e9, total / 1e9))
  }
  invisible(bytes)
}

machine_memory_bytes <- function() {
  info <- tryCatch(suppressWarnings(readLines("/proc/meminfo", n = 1L)),
                   error = function(e) character(0))
  kb <- suppressWarnings(as.numeric(sub("^MemTotal:\\s*([0-9]+) kB.*$", "\\1", info)))
  if (length(kb) != 1 || is.na(kb)) NA_real_ else 1024 * kb
}

# The value of `expr`, or `fallback` when it fails (a solver that did not
# converge, say). A limit of setTimeLimit() is an error too, raised wherever
# R happens to be when it runs out: it goes on to the caller, never taken
# for the method's failure (the run would go on with no limit left).
value_or <- function(expr, fallback) {
  tryCatch(expr, error = function(e) {
    if (is_time_limit(e)) stop(e)
    fallback
  })
}

is_time_limit <- function(e) {
  limits <- c("reached elapsed time limit", "reached CPU time limit",
              "reached session elapsed time limit", "reached session CPU time limit")
  conditionMessage(e) %in% c(limits, vapply(limits, gettext, "", domain = "R"))
}
