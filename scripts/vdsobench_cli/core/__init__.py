"""The vocabulary every room shares: names (vocab), text made printable
(text), the statistics (stats, distributions, bootstrap), the limits they
judge by (limits), CPU names (uarch), emulation records (emulation).
Standard library only, and nothing of the package: reports/ and every room
of the CLI import it, it imports none of them."""
