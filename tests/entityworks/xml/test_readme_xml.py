"""The README's DataSet round trip and DiffGram example, run as written (issue 15)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


def blocks(language: str, marker: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    found = re.findall(rf"```{language}\n(.*?)```", text, re.S)
    return [b for b in found if marker in b]


def test_the_dataset_and_diffgram_example_runs_as_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    [first] = blocks("python", "dataset_of([Customer, Order]")
    [second] = blocks("python", 'import_diffgram("changes.xml"')
    [changes] = blocks("xml", "<diffgr:diffgram")
    [console] = blocks("console", "--diffgram")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(first, "README.md", "exec", dont_inherit=True), namespace)  # noqa: S102 - the README's own code
    assert capsys.readouterr().out == "{'customers': 2, 'orders': 2}\n"
    assert "<customers><id>1</id><name>Ada</name><orders><id>10</id>" in (
        tmp_path / "nested.xml").read_text()
    (tmp_path / "changes.xml").write_text(changes, encoding="utf-8")
    exec(compile(second, "README.md", "exec", dont_inherit=True), namespace)  # noqa: S102
    printed = second.split("# ")[-1].strip()
    assert capsys.readouterr().out == printed + "\n"
    namespace["store"].close()  # type: ignore[attr-defined]

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
           f"{os.environ.get('PATH', '')}"}
    steps = re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", console, re.M)
    assert len(steps) == 2
    for command, expected in steps:
        result = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=120)
        assert result.stdout == expected, command
