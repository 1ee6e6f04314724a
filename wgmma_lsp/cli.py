"""Command line: `wgmma-lsp` (serve over stdio), `wgmma-lsp check PATH...`, `wgmma-lsp explain CODE`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wgmma_lsp import __version__


def _read(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _python_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.py") if q.is_file()))
        else:
            out.append(p)
    return out


def cmd_check(args: argparse.Namespace) -> int:
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.ide.diagnostics import diagnostics
    from wgmma_lsp.ide.model import Severity
    from wgmma_lsp.settings import Settings

    settings = Settings(select=args.select or [], ignore=args.ignore or [])
    records = []
    errors = 0
    status = 0
    for path in _python_files(args.paths):
        try:
            source = _read(path)
        except OSError as e:
            print(f"{path}: cannot read: {e.strerror or e}", file=sys.stderr)
            status = 2
            continue
        diags = diagnostics(analyze(source, str(path), resolve_with_jedi=True), settings)
        if args.trace:
            from wgmma_lsp.trace.check import trace_diagnostics
            from wgmma_lsp.ide.diagnostics import merge
            diags = merge(diags, trace_diagnostics(path, source, settings))
        for d in diags:
            errors += d.severity == Severity.ERROR
            records.append((path, d))
    if args.format == "json":
        print(json.dumps([{
            "file": str(p), "line": d.span.line + 1, "column": d.span.col + 1,
            "end_line": d.span.end_line + 1, "end_column": d.span.end_col + 1,
            "code": d.code, "name": d.name, "severity": d.severity.name.lower(),
            "message": d.message, "source": d.source, "documentation": d.doc_uri,
            "fixes": [f.title for f in d.fixes],
        } for p, d in records], indent=2))
    else:
        for p, d in records:
            sev = "" if d.severity == Severity.ERROR else f"[{d.severity.name.lower()}] "
            print(f"{p}:{d.span.line + 1}:{d.span.col + 1}: {d.code} {sev}{d.message}")
        if records:
            print(f"Found {len(records)} problem{'s' if len(records) != 1 else ''} "
                  f"({errors} error{'s' if errors != 1 else ''}).", file=sys.stderr)
    if status:
        return status
    return 1 if errors else 0


def cmd_explain(args: argparse.Namespace) -> int:
    from wgmma_lsp.rules.registry import RULES, find_rule

    if args.code in (None, "all", "--all"):
        for rule in RULES.values():
            print(f"{rule.code}  {rule.name:32}  {rule.summary}")
        return 0
    rule = find_rule(args.code)
    if rule is None:
        print(f"unknown rule: {args.code} (try `wgmma-lsp explain` for the list)", file=sys.stderr)
        return 2
    print(rule.doc)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from wgmma_lsp.server import serve_stdio

    serve_stdio()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wgmma-lsp", description=__doc__)
    parser.add_argument("--version", action="version", version=f"wgmma-lsp {__version__}")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the language server over stdio (the default)")
    serve.add_argument("--stdio", action="store_true", help="accepted for editor compatibility")
    serve.set_defaults(func=cmd_serve)
    check = sub.add_parser("check", help="report errors in Python files or folders")
    check.add_argument("paths", nargs="+")
    check.add_argument("--format", choices=["text", "json"], default="text")
    check.add_argument("--select", action="append", help="only these rule codes or names")
    check.add_argument("--ignore", action="append", help="skip these rule codes or names")
    check.add_argument("--trace", action="store_true",
                       help="also trace the file's entry points with JAX (runs your code)")
    check.set_defaults(func=cmd_check)
    explain = sub.add_parser("explain", help="print a rule's documentation (no code: list rules)")
    explain.add_argument("code", nargs="?")
    explain.set_defaults(func=cmd_explain)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv == ["--stdio"]:
        argv = ["serve"]
    args = build_parser().parse_args(argv)
    return int(args.func(args))
