"""`generators` must stand alone: no module in it may import `entityworks`."""

import ast
from pathlib import Path

import generators

PACKAGE = Path(generators.__file__).resolve().parent


def test_generators_never_import_entityworks():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "entityworks"]
    assert offenders == []
    assert len(list(PACKAGE.rglob("*.py"))) >= 1
