"""The peer runtime: the sans-I/O table node and the interface every transport drives."""
