"""The Python modules commands import beyond the standard library, each with the
Debian package that provides it for /usr/bin/python3: a leaf, so that errors
(which words a missing one) and packages (which installs them) both read it."""

MODULES = {"numpy": "python3-numpy", "scipy": "python3-scipy",
           "matplotlib": "python3-matplotlib", "jsonschema": "python3-jsonschema"}
