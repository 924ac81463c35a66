"""The `vdsobench` command: see scripts/vdsobench --help."""
