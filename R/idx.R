#' Read an IDX file
#'
#' Reads a file in the IDX format that MNIST, Fashion-MNIST and similar image
#' data sets are distributed in, compressed with gzip or not.
#'
#' An IDX file starts with a four-byte magic number: two zero bytes, a byte
#' giving the element type (`0x08` unsigned byte, `0x09` signed byte, `0x0B`
#' 16-bit integer, `0x0C` 32-bit integer, `0x0D` 32-bit float, `0x0E` 64-bit
#' double) and a byte giving the number of dimensions. Then come the size of
#' each dimension as big-endian 32-bit integers, then the elements, big-endian,
#' with the last dimension varying fastest. The first dimension counts the
#' items (images, labels).
#'
#' @param path Path to the file; gzipped files are read the same way as plain
#'   ones.
#' @param n Number of items to read from the start of the file; `NULL` reads
#'   them all.
#' @param flatten If `TRUE`, a file with three or more dimensions is returned
#'   as a matrix with one row per item; if `FALSE`, as an array with the file's
#'   dimensions.
#' @return Integer values for the integer types, double for the floating-point
#'   ones:
#'   * one dimension (labels): a vector;
#'   * two dimensions: a matrix, one row per item;
#'   * more dimensions, `flatten = TRUE`: a matrix with one row per item, each
#'     item's elements in the file's order (for images, row by row), with
#'     attribute `"item_dim"` giving the item's dimensions. Image `i` of a file
#'     of `r` x `c` images is `matrix(x[i, ], r, c, byrow = TRUE)`;
#'   * more dimensions, `flatten = FALSE`: an array `a` with the file's
#'     dimensions, so that image `i` is `a[i, , ]`.
#' @references
#' LeCun, Y., Cortes, C., & Burges, C. J. C. The MNIST database of handwritten
#' digits (which defines the IDX format).
#' @seealso [fashion_mnist()], which reads the four Fashion-MNIST files.
#' @examples
#' # Write three 2 x 2 images as IDX and read them back.
#' f <- tempfile(fileext = ".idx")
#' con <- file(f, "wb")
#' writeBin(as.raw(c(0, 0, 0x08, 3)), con)
#' writeBin(c(3L, 2L, 2L), con, size = 4, endian = "big")
#' writeBin(as.raw(0:11), con)
#' close(con)
#' read_idx(f)
#' read_idx(f, flatten = FALSE)[2, , ]
#' unlink(f)
#' @export
read_idx <- function(path, n = NULL, flatten = TRUE) {
  flatten <- check_flag(flatten, "flatten")
  con <- idx_open(path)
  on.exit(close(con))
  hdr <- attr(con, "idx_header")
  dims <- hdr$dims
  if (!is.null(n)) {
    n <- check_whole(n, "n", min = 0)
    if (n > dims[1]) {
      stop_arg(sprintf("'n' (%d) is more than the %d items in '%s'", n, dims[1], path))
    }
    dims[1] <- n
  }
  total <- prod(as.numeric(dims))
  if (length(dims) > 1 && (flatten || length(dims) == 2) && prod(as.numeric(dims[-1])) > big_int) {
    idx_stop(path, sprintf("has items of %.0f values, more than a matrix has columns (2^31 - 1)",
                           prod(as.numeric(dims[-1]))))
  }
  x <- idx_read_elements(con, hdr$type, total, path)
  if (length(x) < total) {
    idx_stop(path, sprintf("is truncated: %.0f of %.0f elements present", length(x), total))
  }
  idx_shape(x, dims, flatten)
}

# Up to `total` elements of the file, read in chunks, so that a header that
# promises more than the file holds costs no more memory than the file; a
# damaged gzip stream is an error naming the file.
idx_read_elements <- function(con, type, total, path) {
  chunk <- 2^24
  parts <- list()
  got <- 0
  while (got < total) {
    want <- min(chunk, total - got)
    x <- idx_read_bin(con, path, what = type$what, n = want, size = type$size,
                      signed = type$signed, endian = "big")
    parts[[length(parts) + 1L]] <- x
    got <- got + length(x)
    if (length(x) < want) break
  }
  if (length(parts) == 0L) return(vector(type$what, 0L))
  if (length(parts) == 1L) parts[[1]] else unlist(parts)
}

# readBin() with its warnings and errors (a damaged gzip stream) turned into
# one error that names the file.
idx_read_bin <- function(con, path, ...) {
  x <- tryCatch(readBin(con, ...), warning = identity, error = identity)
  if (inherits(x, "condition")) {
    idx_stop(path, sprintf("could not be read (%s): a damaged file?", conditionMessage(x)))
  }
  x
}

#' Fashion-MNIST images and labels
#'
#' Reads the Fashion-MNIST data set (Xiao et al., 2017), 70,000 greyscale
#' images of 28 x 28 pixels of clothing in ten classes, from its four IDX
#' files on local disk: nothing is downloaded. By default it looks where
#' Debian's package `dataset-fashion-mnist` installs them,
#' `/usr/share/datasets/fashion-mnist/` (or in the directory set with
#' `options(lsnn.fashion_mnist = )`). `has_fashion_mnist()` tells whether the
#' files are there, for examples and vignettes that need them.
#'
#' The files are `train-images-idx3-ubyte`, `train-labels-idx1-ubyte`,
#' `t10k-images-idx3-ubyte` and `t10k-labels-idx1-ubyte`, each gzipped (name
#' ending in `.gz`) or not. When they are missing, the error says how to get
#' them: on Debian `apt-get install dataset-fashion-mnist`; elsewhere,
#' download the four `.gz` files from
#' <https://github.com/zalandoresearch/fashion-mnist> (folder `data/fashion`)
#' into one directory and pass it as `path`.
#'
#' The full set takes about 440 MB of memory as a double matrix: use `n` to
#' read a subset. Pixel values are left as they are in the files, 0 (white
#' background) to 255 (black).
#'
#' @param path Directory holding the four files, or `NULL` for the default.
#' @param n Number of images to return, the first `n` of `split` (for
#'   `"all"`, in the order training set then test set); `NULL` returns all of
#'   them. Only the files needed are read.
#' @param split `"all"` (the 60,000 training images, then the 10,000 test
#'   images), `"train"` or `"test"`: for placing the test images in a layout
#'   of the training images without reading all 70,000 at once.
#' @return `fashion_mnist()`: a list with
#'   \item{X}{a numeric matrix with one row per image of `split` (for
#'     `"all"` the 60,000 training images, then the 10,000 test images) and
#'     784 columns, the pixels row by row;}
#'   \item{label}{a factor of the class of each image, with levels in the
#'     order of the class codes 0 to 9: T-shirt/top, Trouser, Pullover, Dress,
#'     Coat, Sandal, Shirt, Sneaker, Bag, Ankle boot.}
#'
#'   `has_fashion_mnist()`: `TRUE` if the four files are found, else `FALSE`.
#' @references
#' Xiao, H., Rasul, K., & Vollgraf, R. (2017). Fashion-MNIST: a novel image
#' dataset for benchmarking machine learning algorithms. arXiv:1708.07747.
#' @seealso [read_idx()] for other IDX files, [lsnn-data] for synthetic sets.
#' @examples
#' if (has_fashion_mnist()) {
#'   f <- fashion_mnist(n = 1000)
#'   print(dim(f$X))
#'   print(table(f$label))
#'   # Pixels are stored row by row: the transpose, flipped to draw row 1 on top.
#'   image(matrix(f$X[1, ], 28, 28)[, 28:1], col = grey.colors(256, 1, 0),
#'         main = f$label[1], axes = FALSE)
#'   # the first 500 test images
#'   test <- fashion_mnist(n = 500, split = "test")
#' }
#' @export
fashion_mnist <- function(path = NULL, n = NULL, split = c("all", "train", "test")) {
  split <- choice_arg(split, c("all", "train", "test"), "split")
  files <- fashion_mnist_files(path)
  if (anyNA(files)) {
    stop(fashion_mnist_missing(path, files), call. = FALSE)
  }
  n_train <- if (split == "test") 0L else idx_header(files[["train_images"]])$dims[1]
  n_test <- if (split == "train") 0L else idx_header(files[["test_images"]])$dims[1]
  if (is.null(n)) {
    n <- n_train + n_test
  } else {
    n <- check_whole(n, "n", min = 1)
    if (n > n_train + n_test) {
      stop_arg(sprintf("'n' (%d) is more than the %d images of Fashion-MNIST%s", n,
                       n_train + n_test,
                       if (split == "all") "" else paste0("'s ", split, " split")))
    }
  }
  part <- function(images, labels, m) {
    X <- read_idx(files[[images]], n = m)
    y <- read_idx(files[[labels]], n = m)
    if (!identical(attr(X, "item_dim"), c(28L, 28L)) || !is.null(dim(y))) {
      stop(sprintf("'%s' and '%s' do not look like Fashion-MNIST",
                   files[[images]], files[[labels]]), call. = FALSE)
    }
    list(X = X, y = y)
  }
  parts <- list()
  if (n_train > 0) parts[[1]] <- part("train_images", "train_labels", min(n, n_train))
  if (n > n_train) {
    parts[[length(parts) + 1]] <- part("test_images", "test_labels", n - n_train)
  }
  X <- do.call(rbind, lapply(parts, `[[`, "X"))
  attr(X, "item_dim") <- NULL
  storage.mode(X) <- "double"
  y <- unlist(lapply(parts, `[[`, "y"), use.names = FALSE)
  if (anyNA(y) || any(y < 0L | y > 9L)) {
    stop("Fashion-MNIST labels must be 0 to 9", call. = FALSE)
  }
  classes <- c("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")
  list(X = X, label = factor(classes[y + 1L], levels = classes))
}

#' @rdname fashion_mnist
#' @export
has_fashion_mnist <- function(path = NULL) {
  !anyNA(fashion_mnist_files(path))
}

fashion_mnist_default_dir <- "/usr/share/datasets/fashion-mnist"

fashion_mnist_base <- c(train_images = "train-images-idx3-ubyte",
                        train_labels = "train-labels-idx1-ubyte",
                        test_images = "t10k-images-idx3-ubyte",
                        test_labels = "t10k-labels-idx1-ubyte")

fashion_mnist_dir <- function(path) {
  if (is.null(path)) {
    path <- getOption("lsnn.fashion_mnist", fashion_mnist_default_dir)
    if (!is.character(path) || length(path) != 1 || is.na(path)) {
      stop("option 'lsnn.fashion_mnist' must be a single directory name (it is ",
           what_is(path), ")", call. = FALSE)
    }
  }
  if (!is.character(path) || length(path) != 1 || is.na(path)) {
    stop_arg("'path' must be a single directory name")
  }
  path
}

# Named paths of the four files, NA for those not found; gzipped preferred.
fashion_mnist_files <- function(path) {
  dir <- fashion_mnist_dir(path)
  vapply(fashion_mnist_base, function(b) {
    candidates <- file.path(dir, c(paste0(b, ".gz"), b))
    found <- candidates[file.exists(candidates) & !dir.exists(candidates)]
    if (length(found)) found[1] else NA_character_
  }, character(1))
}

fashion_mnist_missing <- function(path, files) {
  dir <- fashion_mnist_dir(path)
  missing <- paste(fashion_mnist_base[is.na(files)], collapse = ", ")
  wanted <- paste0(fashion_mnist_base, ".gz")
  paste0(
    "Fashion-MNIST not found in '", dir, "' (missing: ", missing, ").\n",
    "On Debian, install it with:  apt-get install dataset-fashion-mnist\n",
    "(it goes to ", fashion_mnist_default_dir, ", where lsnn looks by ",
    "default).\n",
    "Elsewhere, download ", paste(wanted, collapse = ", "), "\n",
    "from https://github.com/zalandoresearch/fashion-mnist (folder ",
    "data/fashion) into one directory and pass it as 'path'."
  )
}

idx_types <- list(
  "08" = list(name = "unsigned byte", what = "integer", size = 1L, signed = FALSE),
  "09" = list(name = "signed byte", what = "integer", size = 1L, signed = TRUE),
  "0b" = list(name = "16-bit integer", what = "integer", size = 2L, signed = TRUE),
  "0c" = list(name = "32-bit integer", what = "integer", size = 4L, signed = TRUE),
  "0d" = list(name = "32-bit float", what = "double", size = 4L, signed = TRUE),
  "0e" = list(name = "64-bit double", what = "double", size = 8L, signed = TRUE)
)

# Opens an IDX file (gzipped or not), reads its header and returns the
# connection, positioned at the first element, with the header as attribute
# "idx_header": list(type = one of idx_types, dims = integer vector).
idx_open <- function(path) {
  if (!is.character(path) || length(path) != 1 || is.na(path)) {
    stop_arg("'path' must be a single file name")
  }
  if (!file.exists(path) || dir.exists(path)) {
    stop_arg("'path': IDX file '", path, "' does not exist")
  }
  con <- gzfile(path, "rb")
  ok <- FALSE
  on.exit(if (!ok) close(con))
  magic <- idx_read_bin(con, path, "raw", n = 4L)
  if (length(magic) < 4L || magic[1] != as.raw(0) || magic[2] != as.raw(0) ||
      is.null(idx_types[[as.character(magic[3])]]) || magic[4] == as.raw(0)) {
    idx_stop(path, sprintf("is not an IDX file (bad magic number %s)",
                           paste(as.character(magic), collapse = " ")))
  }
  ndim <- as.integer(magic[4])
  dims <- idx_read_bin(con, path, "integer", n = ndim, size = 4L, endian = "big")
  if (length(dims) < ndim) {
    idx_stop(path, "is truncated: its header is incomplete")
  }
  if (any(dims < 0L)) {
    idx_stop(path, "has a negative dimension size")
  }
  attr(con, "idx_header") <- list(type = idx_types[[as.character(magic[3])]],
                                  dims = dims)
  ok <- TRUE
  con
}

# An error about the file's content, naming the argument and the file.
idx_stop <- function(path, what) {
  stop_arg("'path' ('", path, "') ", what)
}

idx_header <- function(path) {
  con <- idx_open(path)
  on.exit(close(con))
  attr(con, "idx_header")
}

# Turns the elements read (last dimension fastest) into R's shapes.
idx_shape <- function(x, dims, flatten) {
  nd <- length(dims)
  if (nd == 1L) {
    return(x)
  }
  if (nd == 2L || flatten) {
    m <- matrix(x, nrow = dims[1], ncol = prod(dims[-1]), byrow = TRUE)
    if (nd > 2L) {
      attr(m, "item_dim") <- dims[-1]
    }
    return(m)
  }
  aperm(array(x, dim = rev(dims)), rev(seq_len(nd)))
}
