"""MkDocs hook: writes the command-line reference from the typer app itself.

The page ``reference/cli.md`` holds the marker ``<!-- cli-reference -->``; at build time it is
replaced by the help of ``hieropt`` and of every command and sub-command, exactly as ``hieropt CMD
--help`` prints it (100 columns, no colour), so the page cannot drift from the code.
"""

from __future__ import annotations

from typer.main import get_command
from typer.testing import CliRunner

MARKER = "<!-- cli-reference -->"
ENV = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}


def _help(app, args: list[str]) -> str:
    """What ``hieropt ARGS --help`` prints, trailing blanks removed."""
    result = CliRunner().invoke(app, [*args, "--help"], prog_name="hieropt", env=ENV)
    if result.exit_code != 0:
        raise RuntimeError(
            f"hieropt {' '.join(args)} --help exited {result.exit_code}: {result.output}"
        )
    return "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())


def _section(app, args: list[str], level: int) -> list[str]:
    title = " ".join(["hieropt", *args])
    return [f"{'#' * level} `{title}`", "", "```text", _help(app, args), "```", ""]


def reference() -> str:
    """The Markdown of every command's help: ``hieropt``, each command, sub-commands under it."""
    from hieropt.cli import app

    root = get_command(app)
    ctx = root.context_class(root, info_name="hieropt")
    out = _section(app, [], 2)
    for name in root.list_commands(ctx):
        out += _section(app, [name], 2)
        cmd = root.get_command(ctx, name)
        if hasattr(cmd, "list_commands"):  # a command group (typer's own click)
            sub_ctx = cmd.context_class(cmd, info_name=name, parent=ctx)
            for sub in cmd.list_commands(sub_ctx):
                out += _section(app, [name, sub], 3)
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replace the marker on the CLI reference page with the generated help."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
