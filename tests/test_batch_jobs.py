"""How `wgmma-lsp check` hands files to its worker processes (batch._by_folder): the files of one
folder together — a worker reads, parses and interprets the modules they share once — a folder
larger than its share of the work split, and the largest jobs first."""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.batch import FileResult, _by_folder
from wgmma_lsp.settings import Settings


def _jobs(files: dict[str, int], jobs: int = 2) -> list[list[str]]:
    results = [FileResult(Path(p)) for p in files]
    for r, size in zip(results, files.values()):
        r.source = "x" * size
    todo = [(i, Settings()) for i in range(len(results))]
    return [[str(results[i].path) for i, _ in part] for part in _by_folder(todo, results, jobs)]


def test_files_of_a_folder_go_together_largest_job_first():
    parts = _jobs({"/w/a/k1.py": 100, "/w/b/k2.py": 900, "/w/a/k3.py": 200, "/w/c/k4.py": 50})
    assert parts == [["/w/b/k2.py"], ["/w/a/k3.py", "/w/a/k1.py"], ["/w/c/k4.py"]]


def test_a_folder_larger_than_its_share_is_split():
    # 4 files of 100 in one folder, 2 workers: a share is 400 / 4 = 100, one file a job
    parts = _jobs({f"/w/a/k{i}.py": 100 for i in range(4)} | {"/w/b/t.py": 10})
    assert sorted(map(len, parts)) == [1, 1, 1, 1, 1]
    assert parts[-1] == ["/w/b/t.py"]
    assert sorted(p for part in parts for p in part) == sorted(
        [f"/w/a/k{i}.py" for i in range(4)] + ["/w/b/t.py"])


def test_every_file_once_in_some_job():
    files = {f"/w/{d}/f{i}.py": (i * 37) % 101 + 1 for d in "abcde" for i in range(7)}
    parts = _jobs(files, jobs=3)
    flat = [p for part in parts for p in part]
    assert sorted(flat) == sorted(files)
    for part in parts:
        assert len({Path(p).parent for p in part}) == 1
