"""One adapter per technology, each implementing a port."""
