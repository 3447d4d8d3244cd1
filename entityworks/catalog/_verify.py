"""Proving how each map was made: regenerating it from its kind, seed and parameters and
comparing with what the catalog holds (:func:`verify_catalog`), and keeping one generator
version per catalog (:func:`check_versions`, which :func:`~._generate.generate_into` runs).

A map row keeps the version of the generator that built it (``generator_version``) and the
SHA-256 of its grid as built (``grid_sha256``, :func:`~._build.grid_sha256`). Three things
can differ, and each is a finding of its own:

* ``edited``: the stored grid does not hash to the stored hash: the row was changed after
  it was written (by another tool, by hand);
* ``version``: the map was built by another version of its generator than the one
  installed now;
* ``regenerated``: the installed generator builds another grid from the map's seed and
  parameters than the one the map was stored with: the generator changed.

A map that cannot be rebuilt (no seed, a kind no plugin provides, a parameter its generator
no longer takes, a build that fails) is ``unverifiable``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import sqlalchemy as sa

from ..errors import EntityworksError
from ..sql.filters import col
from ..sql.store import Store
from ._build import grid_sha256
from ._models import MapRecord
from .kinds import KINDS, MapKind, map_kind

#: What a :class:`Finding` is about.
Problem = Literal["edited", "version", "regenerated", "unverifiable"]

#: The columns :func:`verify_catalog` reads (no child rows).
_COLUMNS = [
    "id",
    "kind",
    "parameters",
    "seed",
    "generator_version",
    "grid_sha256",
    "grid",
]


@dataclass(frozen=True)
class Finding:
    """One way map ``map_id`` differs from what its generator makes (see the module)."""

    map_id: int
    kind: str
    seed: int | None
    problem: Problem
    detail: str

    def __str__(self) -> str:
        """``map 7 (caves, seed 3): edited: ...``, one line."""
        return f"map {self.map_id} ({self.kind}, seed {self.seed}): {self.problem}: {self.detail}"


@dataclass(frozen=True)
class VerifyReport:
    """What :func:`verify_catalog` found: the maps checked, the findings (in map order),
    the maps stored without provenance (before revision ``0010_provenance``) that the
    installed generator rebuilds exactly, and the rows whose provenance was recorded
    (``fill``)."""

    checked: int
    findings: list[Finding] = field(default_factory=list)
    unrecorded: int = 0
    filled: int = 0

    @property
    def ok(self) -> bool:
        """True when no map differs."""
        return not self.findings

    @property
    def differing(self) -> int:
        """How many maps have at least one finding."""
        return len({f.map_id for f in self.findings})

    def __str__(self) -> str:
        return self.summary()

    def summary(self, where: str | None = None) -> str:
        """The summary line: ``verified 12 maps in levels.db: 10 as made, 2 differ (1
        edited, 1 version)``, and what ``fill`` did or could do."""
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.problem] = counts.get(f.problem, 0) + 1
        text = f"verified {_maps(self.checked)}" + ("" if where is None else f" in {where}")
        text += f": {self.checked - self.differing} as made"
        if self.findings:
            verb = "differs" if self.differing == 1 else "differ"
            listed = ", ".join(f"{n} {problem}" for problem, n in counts.items())
            text += f", {self.differing} {verb} ({listed})"
        if self.filled:
            text += f"; provenance recorded for {_maps(self.filled)}"
        if self.unrecorded:
            text += (
                f"; {_maps(self.unrecorded)} stored without provenance, rebuilt exactly "
                "(fill records it)"
            )
        return text


def _maps(n: int) -> str:
    return f"{n} map" if n == 1 else f"{n} maps"


def verify_catalog(
    store: Store,
    where: Any = None,
    *,
    fill: bool = False,
    progress: Callable[[int], None] | None = None,
) -> VerifyReport:
    """Regenerate each map of ``store`` selected by ``where`` (a filter as
    ``Store.select`` takes, e.g. ``col("kind") == "caves"``) from its kind, seed and
    parameters, and report how it differs (:class:`Finding`; see the module). Nothing is
    written unless ``fill``.

    With ``fill``, a map that the installed generator rebuilds exactly, whose stored grid
    matches the hash it was stored with (if any), and that records no provenance (stored
    before revision ``0010_provenance``) or another generator version, gets the installed
    generator's version and its grid's hash: it is then no finding. Maps that differ are
    never changed.

    ``progress(n)`` is called with the number of maps checked since the last call.
    """
    report_findings: list[Finding] = []
    checked = unrecorded = 0
    to_fill: list[tuple[int, str | None, str]] = []
    rows = store.select(MapRecord, columns=_COLUMNS, where=where, order_by="id")
    for map_id, kind, params, seed, version, stored_hash, grid in rows:
        checked += 1
        findings, refill = _verify_one(map_id, kind, params, seed, version, stored_hash, grid)
        if refill is not None:  # rebuilt exactly; provenance missing or of another version
            if fill:
                to_fill.append((map_id, *refill))
                findings = [f for f in findings if f.problem != "version"]
            elif version is None:
                unrecorded += 1
        report_findings.extend(findings)
        if progress is not None:
            progress(1)
    if to_fill:
        with store.transaction():
            for key, installed, digest in to_fill:
                store.update(
                    MapRecord,
                    {"generator_version": installed, "grid_sha256": digest},
                    where=col("id") == key,
                )
    return VerifyReport(checked, report_findings, unrecorded, len(to_fill))


def _verify_one(
    map_id: int,
    kind: str,
    params: dict[str, Any],
    seed: int | None,
    version: str | None,
    stored_hash: str | None,
    grid: Any,
) -> tuple[list[Finding], tuple[str | None, str] | None]:
    """The findings of one map, and ``(version, hash)`` to record when the installed
    generator rebuilds it exactly and its provenance is missing or of another version
    (else None)."""

    def finding(problem: Problem, detail: str) -> Finding:
        return Finding(map_id, kind, seed, problem, detail)

    out: list[Finding] = []
    held = grid_sha256(grid)
    edited = stored_hash is not None and stored_hash != held
    spec = KINDS.get(kind)
    installed = None if spec is None else spec.generator_version()
    kind_module = "" if spec is None else spec.module
    rebuilt: str | None = None
    why = None
    if spec is None:
        why = f"no installed plugin provides the kind {kind!r}"
    elif seed is None:
        why = "no seed is stored: it cannot be rebuilt"
    else:
        try:
            rebuilt = grid_sha256(_rebuild(spec, params, seed))
        except (TypeError, ValueError, EntityworksError) as exc:
            why = f"its generator refuses its parameters: {exc}"
    if edited:
        if rebuilt == held:  # the grid is the generator's: the hash column was changed
            what = "its grid_sha256 was changed after it was written (its grid is the one "
            what += "its generator builds)"
        else:
            what = f"its grid was changed after it was written (it hashes to {held[:12]}..., "
            what += f"it was stored with {str(stored_hash)[:12]}...)"
        out.append(finding("edited", what))
    if spec is not None and version is not None and version != installed:
        out.append(
            finding(
                "version", f"built by {spec.module} {version}, the installed version is {installed}"
            )
        )
    if why is not None:
        out.append(finding("unverifiable", why))
        return out, None
    if rebuilt not in (held, stored_hash):
        expected = stored_hash if stored_hash is not None else held
        out.append(
            finding(
                "regenerated",
                f"{kind_module} {installed} builds another grid from its seed and parameters "
                f"(hash {str(rebuilt)[:12]}..., stored {expected[:12]}...): the generator "
                "changed",
            )
        )
        return out, None
    if edited or (version == installed and stored_hash is not None):
        return out, None
    return out, (installed, held)


def _rebuild(spec: MapKind, params: dict[str, Any], seed: int) -> Any:
    """The grid the installed generator of ``spec`` builds from ``params`` and ``seed``
    (the stored parameters hold the kind's fixed ones too)."""
    function = spec.function()
    accepted = set(inspect.signature(function).parameters)
    arguments = {**params, **dict(spec.fixed)}
    unknown = sorted(set(arguments) - accepted)
    if unknown:
        raise ValueError(f"it takes no parameter {', '.join(map(repr, unknown))} any more")
    return function(**arguments, seed=seed).grid


class MixedVersions(EntityworksError):
    """Maps of another generator version are in the catalog already (see
    :func:`check_versions`)."""


def check_versions(store: Store, kind: str) -> None:
    """Refuse (:class:`MixedVersions`) to add maps of ``kind`` to a catalog holding maps of
    another version of the same generator: maps whose generator module is in the same
    top-level package (``generators``), or, for a kind that names its own version
    (:attr:`~.kinds.MapKind.version`), maps of the same kind. Maps stored without a version
    (before revision ``0010_provenance``) are not counted."""
    spec = map_kind(kind)
    installed = spec.generator_version()
    table = store.table(MapRecord)
    with store.connection() as conn:
        versions = conn.execute(
            sa.select(table.c.generator_version)
            .where(table.c.generator_version.is_not(None))
            .distinct()
        ).scalars()
        others = sorted(v for v in versions if v != installed)
        package = spec.module.partition(".")[0]
        for version in others:
            stmt = sa.select(table.c.generator, table.c.kind).where(
                table.c.generator_version == version
            )
            if spec.version is not None:
                stmt = stmt.where(table.c.kind == kind)
            for generator, other_kind in conn.execute(stmt.distinct()):
                if spec.version is not None or generator.partition(".")[0] == package:
                    raise MixedVersions(
                        f"the catalog holds {other_kind} maps built by {generator} {version}, "
                        f"and {kind} would be built by {spec.module} {installed}: a catalog "
                        f"keeps one generator version (entityworks verify checks the maps "
                        f"stored; mix_versions=True / --mix-versions adds these anyway)"
                    )


__all__ = [
    "Finding",
    "MixedVersions",
    "Problem",
    "VerifyReport",
    "check_versions",
    "verify_catalog",
]
