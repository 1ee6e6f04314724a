"""Command line: `wgmma-lsp` (serve over stdio), `wgmma-lsp check PATH...`, `wgmma-lsp explain CODE`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from wgmma_lsp import __version__


class UsageError(Exception):
    """A mistake in the command line or the configuration: exit 2."""


def _codes(values: list[str] | None) -> list[str]:
    """`--select A --select B,C` -> [A, B, C], each a known code, name or code prefix."""
    out = [v.strip() for value in values or [] for v in value.split(",") if v.strip()]
    if not out:
        return out  # no rule module is imported for nothing (the registry imports every one)
    from wgmma_lsp.rules.registry import is_known_selector

    for v in out:
        if not is_known_selector(v):
            raise UsageError(f"unknown rule code or name: {v} (try `wgmma-lsp explain` for the list)")
    return out


#: A command whose process may end without Python's teardown once it returned (launch.py): `check`.
ends_without_teardown = False


def cmd_check(args: argparse.Namespace) -> int:
    from wgmma_lsp.config import ConfigError

    global ends_without_teardown
    ends_without_teardown = True
    if not args.no_cache and not args.trace:  # before anything is looked up (results_cache.py)
        from wgmma_lsp import observed

        observed.start()
    try:
        env = _activate_environment(args)
        if args.show_settings:
            return _show_settings(args)
        if env.jax_root is None:  # said once, on stderr: stdout may be a machine format
            hint = ("install jax there, or pass another --python" if args.python
                    else "pass --python or set VIRTUAL_ENV")
            print(f"note: {env.describe()} ({hint})", file=sys.stderr)
        return _check(args)
    except (UsageError, ConfigError) as e:
        print(f"wgmma-lsp: error: {e}", file=sys.stderr)
        return 2


def _activate_environment(args: argparse.Namespace):
    """The environment whose JAX the run follows (environment.py): `--python`, the first
    path's `[tool.wgmma-lsp] python`, the environment the first path is installed in when it
    holds JAX (a package's files in a virtualenv's site-packages), `VIRTUAL_ENV`, a `.venv` in
    its project root or the working directory, wgmma-lsp's own."""
    from wgmma_lsp import config, environment

    first = Path(args.paths[0]) if args.paths else Path.cwd()
    if args.python:
        env = environment.discover(args.python, "--python")
    else:
        cfg = config.find(first)
        installed = None if cfg.python else environment.installed_environment(first)
        if cfg.python:
            env = environment.discover(cfg.python, f"python in {cfg.path}", base=cfg.root)
        elif installed is not None:
            env = installed
        else:
            roots = [r for r in (environment.project_root(first), Path.cwd()) if r is not None]
            env = environment.discover(roots=roots)
    environment.activate(env)
    return env


def _file_settings(args: argparse.Namespace):
    """settings_for(path): the file's configuration, then the command line on top."""
    from wgmma_lsp import config
    from wgmma_lsp.settings import Settings

    select, ignore = _codes(args.select), _codes(args.ignore)

    by_folder: dict[str, config.Config] = {}  # one run: each folder's configuration looked up once

    def settings_for(path: Path) -> Settings:
        s = Settings()
        folder = os.path.dirname(os.path.abspath(path))
        cfg = by_folder.get(folder)
        if cfg is None:
            cfg = by_folder[folder] = config.find(path)
        cfg.apply(s, path)
        if select:
            s.select = list(select)
        s.ignore = list(dict.fromkeys([*s.ignore, *ignore]))
        s.sweeps = args.sweeps or s.sweeps or "all"  # a checker in CI has time for every combination
        return s

    return settings_for


def _show_settings(args: argparse.Namespace) -> int:
    from wgmma_lsp import config

    from wgmma_lsp import results_cache
    from wgmma_lsp.environment import active

    settings_for = _file_settings(args)
    for i, p in enumerate(args.paths):
        path = Path(p)
        if i:
            print()
        print(config.describe(path, settings_for(path), config.find(path)))
        print(f"jax: {active().describe()}")
        print(f"result cache: {results_cache.folder()}" + (" (off: --no-cache)" if args.no_cache else ""))
    return 0


def _check(args: argparse.Namespace) -> int:
    from wgmma_lsp import config, formats, kept_trees
    from wgmma_lsp.batch import check_files, configure_gc, incomplete_summary, kernels_summary
    from wgmma_lsp.discovery import DEFAULT_EXCLUDE, exclude_spec, python_files
    from wgmma_lsp.ide.model import Severity

    settings_for = _file_settings(args)

    def excludes(root: Path) -> list:
        cfg = config.find(root)
        base = cfg.root if cfg.root is not None else Path(os.path.abspath(root))
        exclude = list(cfg.exclude) if cfg.exclude is not None else list(DEFAULT_EXCLUDE)
        out = [exclude_spec([*exclude, *cfg.extend_exclude], base)]
        if args.exclude is not None or args.extend_exclude:  # the command line: relative to the root
            cli = _split(args.exclude) if args.exclude is not None else []
            if args.exclude is not None:
                out = [exclude_spec(cfg.extend_exclude, base)]
            out.append(exclude_spec([*cli, *_split(args.extend_exclude)], Path(os.path.abspath(root))))
        return out

    gitignore = not args.no_respect_gitignore and all(
        config.find(Path(p)).respect_gitignore for p in args.paths)
    found = list(python_files(args.paths, excludes=excludes, respect_gitignore=gitignore))
    configure_gc()
    with kept_trees.documents_kept():  # a file analysed and imported is parsed once (kept_trees.py)
        results = check_files(found, settings_for, trace=args.trace, jobs=args.jobs,
                              progress=False if args.no_progress else None, cache=not args.no_cache)
        if args.fix or args.diff:  # apply_fixes.py: the preferred fixes, then the files checked again
            from wgmma_lsp import apply_fixes

            by_path = {f.path: f for f in found}
            results, fixed = apply_fixes.run(
                results, settings_for, lambda paths: check_files(
                    [by_path[p] for p in paths], settings_for, trace=args.trace, jobs=args.jobs,
                    progress=False, cache=not args.no_cache), diff_only=args.diff,
                machine=args.format in ("json", "sarif", "github"))
            if args.diff:
                return 1 if fixed else 0
    docs = settings_for(Path(args.paths[0])).docs_base_url if args.paths else None
    out = formats.render(args.format, results, docs)
    if out:
        print(out)
    summary = incomplete_summary(formats.summary(results), results)  # WG904: not a clean pass
    summary = kernels_summary(summary, results)  # kernels checked with nothing known
    if args.trace:  # --trace with nothing to trace is not a pass of the trace part
        summary = _untraced(summary, results, sys.stderr if args.format in ("json", "sarif", "github")
                            else sys.stdout)
    crashed = [r for r in results if r.crash]
    if crashed:  # never "All checks passed!" when a file was not checked
        summary = (f"{summary} {len(crashed)} file{'s' if len(crashed) != 1 else ''} could not "
                   f"be analysed (internal error).").replace("All checks passed! ", "")
    machine = args.format in ("json", "sarif", "github")
    if not machine and any(r.diagnostics for r in results):
        print()
    print(summary, file=sys.stderr if machine else sys.stdout)
    errors = sum(d.severity == Severity.ERROR for r in results for d in r.diagnostics)
    for r in crashed:
        print(f"wgmma-lsp: internal error while analysing {r.path} (please report it):\n{r.crash}",
              file=sys.stderr)
    if crashed:
        return 2  # the files were not all checked: neither clean nor a verdict on them
    return 1 if errors or (args.strict and any(r.incomplete for r in results)) else 0


def _untraced(summary: str, results: list, out) -> str:
    """Say which analysed files `--trace` traced nothing in (no entry point declared), and how
    to declare one; a run that traced nothing at all is no "All checks passed!"."""
    from wgmma_lsp.entry.declared import all_entry_points

    analysed = [r for r in results if r.analysed and r.source is not None and not r.crash]
    untraced = [r for r in analysed if not all_entry_points(r.source, r.path)]
    if not untraced:
        return summary
    names = ", ".join(str(r.path) for r in untraced[:3]) + (", ..." if len(untraced) > 3 else "")
    print(f"--trace: nothing was traced in {len(untraced)} of {len(analysed)} analysed "
          f"file{'s' if len(analysed) != 1 else ''} ({names}): no entry points declared. Declare one "
          f"with a comment such as '# wgmma-lsp: trace matmul(bf16[256,256], bf16[256,512])', or in "
          f"pyproject.toml ([tool.wgmma-lsp] trace = [\"path.py:matmul(...)\"]); see docs/trace-mode.md",
          file=out)
    if len(untraced) == len(analysed) and summary.startswith("All checks passed!"):
        return "No errors found by the static checks; nothing was traced (no entry points)." + \
            summary[len("All checks passed!"):]
    return summary


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def cmd_explain(args: argparse.Namespace) -> int:
    from wgmma_lsp.rules.registry import ALL_CODES, find_rule

    if args.code in (None, "all", "--all"):
        for rule in ALL_CODES.values():
            print(f"{rule.code}  {rule.name:32}  {rule.summary}")
        return 0
    rule = find_rule(args.code)
    if rule is None:
        print(f"unknown rule: {args.code} (try `wgmma-lsp explain` for the list)", file=sys.stderr)
        return 2
    if args.format == "markdown":
        print(rule.doc)
    else:  # explain_render.py: for a terminal (colour only on a tty without NO_COLOR)
        from wgmma_lsp.explain_render import render, use_colour

        print(render(rule.doc, colour=use_colour(sys.stdout)))
    return 0


def cmd_daemon(args: argparse.Namespace) -> int:
    from wgmma_lsp import daemon_control

    if not hasattr(os, "fork"):
        print("wgmma-lsp daemon: not available here (it forks a process per check: POSIX only)",
              file=sys.stderr)
        return 2
    if args.action == "start":
        return daemon_control.start(args.idle_timeout)  # (None: the daemon's default)
    if args.action == "stop":
        return daemon_control.stop()
    if args.action == "status":
        return daemon_control.status(args.json)
    # `serve` is run by the launcher (launch.py) before this module is imported: here only when
    # `cli.main` is called from Python (a test), which cannot become the daemon's process
    print("wgmma-lsp daemon serve: only the `wgmma-lsp` command (launch.py) runs the daemon",
          file=sys.stderr)
    return 2


def cmd_serve(args: argparse.Namespace) -> int:
    from wgmma_lsp.server import serve_stdio

    serve_stdio()
    return 0


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing shutil (and bz2, lzma with it)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, given the width argparse itself would take: argparse imports
    shutil for it (~2.5 ms of every `wgmma-lsp` process, a formatter being made per argument)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wgmma-lsp", description=__doc__, formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"wgmma-lsp {__version__}")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the language server over stdio (the default)",
                           formatter_class=_HelpFormatter)
    serve.add_argument("--stdio", action="store_true", help="accepted for editor compatibility")
    serve.set_defaults(func=cmd_serve)
    check = sub.add_parser("check", help="report errors in Python files or folders",
                           formatter_class=_HelpFormatter)
    check.add_argument("paths", nargs="+")
    check.add_argument("--format", choices=["text", "full", "json", "sarif", "github"], default="text")
    check.add_argument("--select", action="append", help="only these rule codes or names (comma-separated)")
    check.add_argument("--ignore", action="append", help="skip these rule codes or names (comma-separated)")
    check.add_argument("--exclude", action="append",
                       help="gitignore-style patterns to skip, replacing the defaults (.git, .venv, build, …)")
    check.add_argument("--extend-exclude", action="append", help="patterns to skip, besides the defaults")
    check.add_argument("--no-respect-gitignore", action="store_true", help="walk what .gitignore ignores too")
    check.add_argument("--jobs", "-j", type=int, default=None, help="parallel processes (default: all cores)")
    check.add_argument("--no-progress", action="store_true", help="no progress line on a terminal")
    check.add_argument("--no-cache", action="store_true",
                       help="analyse every file again: neither read nor write the result cache "
                            "(kept in the user cache directory; see `results_cache.py`)")
    check.add_argument("--sweeps", choices=["all", "budget"], default=None,
                       help="tuning loops: check every combination (default) or, as the server "
                            "does, only what the typing-speed budget allows (the rest gets a note)")
    check.add_argument("--strict", action="store_true",
                       help="exit 1 when a file was not fully analysed (WG904), as for an error")
    check.add_argument("--fix", action="store_true",
                       help="apply the preferred quick fix of each diagnostic (each verified by JAX in "
                            "wgmma-lsp's tests), then report what remains")
    check.add_argument("--diff", action="store_true",
                       help="print the fixes --fix would apply as a unified diff; write nothing "
                            "(exit 1 when there are some)")
    check.add_argument("--trace", action="store_true",
                       help="also trace the file's entry points with JAX (runs your code)")
    check.add_argument("--python", metavar="PATH",
                       help="the interpreter (or environment folder) whose JAX to follow "
                            "(default: VIRTUAL_ENV, a .venv in the project, wgmma-lsp's own)")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings that apply to each PATH (configuration file, rules, excludes) and exit")
    check.add_argument("--no-daemon", action="store_true",
                       help="check in this process even when a check daemon runs (`wgmma-lsp daemon`)")
    check.set_defaults(func=cmd_check)
    daemon = sub.add_parser(
        "daemon", formatter_class=_HelpFormatter,
        help="a background process that `check` hands its work to: each check starts with the "
             "analysis already imported (start, stop, status; serve: in the foreground)")
    daemon.add_argument("action", choices=["start", "stop", "status", "serve"])
    daemon.add_argument("--idle-timeout", type=float, default=None, metavar="SECONDS",
                        help="start/serve: end after this long without a check (0: never; default 3 h)")
    daemon.add_argument("--json", action="store_true", help="status: as JSON")
    daemon.set_defaults(func=cmd_daemon)
    explain = sub.add_parser("explain", help="print a rule's documentation (no code: list rules)",
                             formatter_class=_HelpFormatter)
    explain.add_argument("code", nargs="?")
    explain.add_argument("--format", choices=["text", "markdown"], default="text",
                         help="text: rendered for a terminal (default); markdown: the raw documentation")
    explain.set_defaults(func=cmd_explain)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv == ["--stdio"]:
        argv = ["serve"]
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # `wgmma-lsp check . | head`: the reader left; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
