# The tests run on one thread unless they ask for more: their data are small,
# where a thread pool's start-up outweighs the work, and every result is the
# same for any number of threads (tests that give n_threads check that).
# LSNN_TEST_THREADS overrides it.
options(lsnn.n_threads = as.integer(Sys.getenv("LSNN_TEST_THREADS", "1")))
