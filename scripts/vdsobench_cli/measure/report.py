"""The merged report of results files, as a library: index.md (the machines,
what differs between the runs, the merged table, the charts embedded),
merged.json and the charts, written into one directory, all or none.
write() returns the paths it wrote; `report` prints them and the fleet's
collect keeps them. The table itself is reports/merge.py's; the files are
read by comparison_io.py and the charts written by charts.py."""

from vdsobench_cli.measure import charts, comparison_io

from reports import merge, plots_write


def table(files, command, reference=None, variants=None, clocks=None, modes=None):
    """([(path, results)], the merged table) of the results files."""
    inputs = comparison_io.load_results(files, command)
    return inputs, charts.drawing(merge.merge, inputs, reference=reference,
                                variants=variants, clocks=clocks, modes=modes)


def index(merged, figures, formats, argv):
    """index.md: the machines, what differs, the table, and the charts."""
    lines = ["# vdsobench: results across machines and CPUs", "",
             merge.render_merge(merged, "markdown").rstrip(), ""]
    image = "png" if "png" in formats else formats[0]
    for stem, _ in figures:
        lines += [f"![{stem}]({stem}.{image})", ""]
    lines.append("The merged table as JSON: [merged.json](merged.json). "
                 "Made by `" + " ".join(["scripts/vdsobench"] + argv) + "`.")
    return "\n".join(lines) + "\n"


def write(inputs, out_dir, argv, formats=None, reference=None, variants=None, clocks=None,
          modes=None):
    """The report of the results files `inputs` in out_dir: the paths written.
    formats: the charts' ("png,svg" when None); argv: the command line that
    index.md names; variants, clocks, modes: patterns, or None for all."""
    charts.plots_module("report")  # matplotlib, or one line saying it is missing
    formats = charts.plot_formats(formats)
    charts.check_out_dir(out_dir)
    loaded, merged = table(inputs, "report", reference, variants, clocks, modes)
    figures = charts.results_figures(loaded, variants, clocks, modes, merged["reference"])
    # per-CPU first: it is the answer to "and on other CPUs?"
    figures.sort(key=lambda f: not f[0].startswith("per-cpu"))
    outputs = ([plots_write.text_output("index.md", index(merged, figures, formats, list(argv))),
                plots_write.text_output("merged.json", merge.render_merge(merged, "json"))]
               + charts.outputs(figures, formats))
    return charts.write(out_dir, outputs)
