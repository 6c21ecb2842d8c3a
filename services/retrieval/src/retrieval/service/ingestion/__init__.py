"""Documents in: checks, claims, writes, the library of a namespace, sync and repair."""
