"""Running a validated spec: the executor it asks for, one runner per computation."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import socket
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Union, cast

import numpy as np

from smoothdp_nb.core.data import datasets
from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.release.odometer import BudgetExceeded, PrivacyOdometer
from smoothdp_nb.core.release.reports import NoiseComparison, ReleaseReport
from smoothdp_nb.core.release.smooth_sensitivity import compare_noise, release
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, check_budget
from smoothdp_nb.core.runtime.parallel import process_pool
from smoothdp_nb.core.runtime.sweeps import sweep
from smoothdp_nb.core.smoothed.accounting.inverse import profile_epsilon
from smoothdp_nb.core.smoothed.delta import (
    SmoothedCurve,
    SmoothedResult,
    estimate_smoothed,
    smoothed_delta,
    smoothed_delta_curve,
)
from smoothdp_nb.core.smoothed.reports import ProfileResult, profile
from smoothdp_nb.spec.data import election_hists, pi_from, release_data, resolve_mechanism
from smoothdp_nb.spec.errors import SpecError, core_message, key_of_core_error, spec_line
from smoothdp_nb.spec.parsing import Spec, parse_spec
from smoothdp_nb.spec.validate import SCHEDULER, check_mechanism

#: what a spec computes: one result object per computation
SpecResult = Union["ProfileResult", "SmoothedResult", "SmoothedCurve", "ReleaseReport", "NoiseComparison"]

__all__ = ["run_spec", "SpecResult", "RUNNERS", "smoothed_at", "spec_executor", "reachable"]


def run_spec(
    spec: str | Mapping[str, object] | Spec,
    namespace: Mapping[str, object] | None = None,
    *,
    executor: cf.Executor | None = None,
    progress: bool | None = None,
    base_dir: str | Path | None = None,
) -> SpecResult:
    """Validate and run one spec; return its result object.

    The keys and what they accept: :func:`~smoothdp_nb.spec.keys_help`.

    Parameters
    ----------
    spec : str, mapping or Spec
        TOML text, the equivalent dict, or a :class:`Spec` from :func:`parse_spec`.
    namespace : mapping, optional
        Variables that ``mechanism = "..."``, ``data = "..."`` and ``pi = "..."``
        may name (the notebook's user namespace in the magic).
    executor : concurrent.futures.Executor, optional
        Runs Monte Carlo chunks, and the points of an exact sweep.
    progress : bool or None
        Progress bars of the core (None: only for long computations).
    base_dir : path, optional
        Directory against which a relative ``csv`` path is resolved.

    Returns
    -------
    ProfileResult, SmoothedResult, SmoothedCurve, ReleaseReport or NoiseComparison

    Raises
    ------
    SpecError
        For an invalid spec (the key, the allowed values and the line).
        Errors of the core computations propagate with their own messages.

    Examples
    --------
    >>> r = run_spec('compute = "profile"\\nhistogram = [60, 40]\\nepsilon = 0.5\\nmechanism = {T = 10}')
    >>> r.to_frame()["label"].tolist()
    [0]
    """
    parsed = spec if isinstance(spec, Spec) else parse_spec(spec)
    ns: Mapping[str, object] = namespace if namespace is not None else {}
    try:
        params = parsed.params
        if isinstance(params.get("mechanism"), str):  # a Mechanism of the namespace, checked like a table's
            params = {**params, "mechanism": resolve_mechanism(params["mechanism"], namespace)}
            check_mechanism(params["mechanism"], params)
        with spec_executor(params, executor) as ex:
            return RUNNERS[parsed.compute](params, ns, ex, progress, Path(base_dir) if base_dir is not None else None)
    except SpecError as err:
        if err.line is None:
            err.with_line(spec_line(parsed.lines, err.key, err.near))
        raise
    except OSError as exc:  # I/O: an unreachable scheduler, a file that cannot be read
        io_key: str | None = next((k for k in ("scheduler", "csv", "executor") if k in parsed.raw), None)
        raise SpecError(f"{type(exc).__name__}: {exc}", io_key, spec_line(parsed.lines, io_key)) from exc
    except (TypeError, ValueError, MemoryError) as exc:
        # the core refused a value or a size: a user error, reported at the key it concerns
        key = key_of_core_error(exc, parsed.raw)
        raise SpecError(core_message(exc), key, spec_line(parsed.lines, key)) from exc


def reachable(address: str, timeout: float) -> None:
    """Open and close a TCP connection to the scheduler, else a SpecError at ``scheduler``.

    Checked before a Dask client is made: a client that fails to connect keeps its IO loop thread,
    and after a few of them in one process distributed's loop runner fails with a bare assertion.
    """
    m = SCHEDULER.fullmatch(address)
    if m is None:
        raise SpecError(f"must be an address [scheme://]host:port, got {address!r}", "scheduler")
    host = m["host"].strip("[]")
    try:
        with socket.create_connection((host, int(m["port"])), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SpecError(f"cannot reach the Dask scheduler at {address}: {reason}", "scheduler") from None


@contextlib.contextmanager
def spec_executor(p: Mapping[str, Any], given: cf.Executor | None) -> Iterator[cf.Executor | None]:
    """The executor a spec asks for (``executor = "dask"`` and so on), closed afterwards.

    An executor passed by the caller (``--executor NAME`` in the magic) wins.
    """
    kind = p.get("executor")
    if given is not None or kind is None:
        yield given
        return
    workers = p.get("workers", 2)
    if kind == "threads":
        with cf.ThreadPoolExecutor(workers) as ex:
            yield ex
    elif kind == "processes":
        with process_pool(workers) as pool:  # forkserver/spawn: never a fork of this (threaded) process
            yield pool
    else:
        try:
            from dask.distributed import Client, LocalCluster  # deferred: dask is optional (the dask extra)
        except ImportError:
            raise SpecError("executor = 'dask' needs dask: pip install 'smoothdp_nb[dask]'", "executor") from None
        if "scheduler" in p:
            # deferred: dask is optional
            import dask.config
            from dask.utils import parse_timedelta

            timeout = float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s"))
            reachable(p["scheduler"], timeout)
            try:
                client = Client(p["scheduler"], timeout=timeout)
            except Exception as exc:  # an address that answers but is no scheduler, a handshake that fails
                raise SpecError(
                    f"cannot connect to the Dask scheduler at {p['scheduler']}: {type(exc).__name__}: {exc}",
                    "scheduler",
                ) from None
            cluster = None
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        try:
            # pure=False: identical tasks must be recomputed, not served from Dask's cache
            yield client.get_executor(pure=False)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def smoothed_at(
    n: int, mechanism: Any, pi: Any, epsilon: FloatArray, method: str, options: dict[str, Any]
) -> dict[str, Any]:
    """One point of an exact sweep (top level, so process pools can pickle it)."""
    return {"result": smoothed_delta(mechanism, n, pi, epsilon, method=method, progress=False, **options)}


def _run_profile(
    p: dict[str, Any], ns: Mapping[str, object], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> ProfileResult:
    labels: Sequence[Hashable] | None
    if "dataset" in p:
        if p["dataset"] == "us-elections":
            hists, labels = election_hists(p.get("years"))
        else:
            df = datasets.us_2020_districts()
            hists, labels = df[["biden_votes", "trump_votes"]].to_numpy(np.int64), df["district"].tolist()
    else:
        hists, labels = p["hists"], p.get("labels")
    eps = p["epsilon"]
    if "target_delta" in p:  # add every database's smallest epsilon meeting each target
        found = np.asarray(profile_epsilon(p["mechanism"], hists, p["target_delta"]), dtype=float)
        eps = np.unique(np.concatenate([eps, found[np.isfinite(found)]]))
        if eps.size == 0:
            raise SpecError("no epsilon up to 512 meets it at any database", "target_delta")
    return profile(p["mechanism"], hists, eps, labels=labels, source=p["source"])


def _resolve_pi(p: dict[str, Any], ns: Mapping[str, object]) -> Any:
    return pi_from(p["pi"], ns) if isinstance(p["pi"], str) else p["pi"]


def _run_smoothed(
    p: dict[str, Any], ns: Mapping[str, object], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> SmoothedResult:
    kw = dict(p["options"])
    if p["method"] == "monte-carlo" and executor is not None:
        kw["executor"] = executor
    return smoothed_delta(
        p["mechanism"], p["n"], _resolve_pi(p, ns), p["epsilon"], method=p["method"], progress=progress, **kw
    )


def _run_sweep(
    p: dict[str, Any], ns: Mapping[str, object], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> SmoothedCurve:
    pi = _resolve_pi(p, ns)
    kw = dict(p["options"])
    if p["method"] == "exact" and executor is not None and len(p["ns"]) > 1:
        # every point estimated before the first starts (in turn: the executor may have one worker)
        check_budget(
            estimate_smoothed(p["mechanism"], p["ns"], pi, p["epsilon"], "exact"),
            kw.get("budget", DEFAULT_BUDGET_SECONDS),
            f"the sweep over {len(p['ns'])} values of n",
            "use fewer or smaller n, or method = 'monte-carlo'",
            parameter="n",
        )
        res = sweep(
            smoothed_at,
            {"n": p["ns"]},
            executor,
            progress=progress,
            fixed={"mechanism": p["mechanism"], "pi": pi, "epsilon": p["epsilon"], "method": "exact", "options": kw},
        )
        if res.failures:
            i, msg = res.failures[0]
            raise RuntimeError(f"sweep point n = {res.points[i]['n']} failed: {msg}")
        # each record is the dict smoothed_at returns: {"result": a SmoothedResult}
        done = cast("list[SmoothedResult]", [rec["result"] for rec in res.records if rec is not None])
        if res.partial:
            if not done:
                raise KeyboardInterrupt("sweep interrupted before any point finished")
            # interrupted: keep what was computed, and say so
            curve = SmoothedCurve.from_results(done)
            print(f"sweep interrupted: {len(done)} of {len(res.points)} values of n computed")
            return curve
        return SmoothedCurve.from_results(done)
    if p["method"] == "monte-carlo" and executor is not None:
        kw["executor"] = executor
    return smoothed_delta_curve(p["mechanism"], p["ns"], pi, p["epsilon"], method=p["method"], progress=progress, **kw)


def _run_release(
    p: dict[str, Any], ns: Mapping[str, object], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> ReleaseReport:
    kw = {k: p[k] for k in ("gamma", "delta", "shape", "trim", "rng", "lattice", "diagnostics") if k in p}
    notes = ("seeded noise: for experiments only, not for a real release",) if "rng" in p else ()
    if "budget" not in p:
        x, name = release_data(p, ns, base)
        rel = release(x, query=p["query"], epsilon=p["epsilon"], noise=p["noise"], bounds=p["bounds"], **kw)
        return ReleaseReport(rel, name=name, notes=notes)
    odo = _odometer(p["budget"], ns)
    cost = {k: p[k] for k in ("gamma", "delta", "shape") if k in p}
    try:  # the budget is tested before the data is even loaded: a refused release reads nothing
        odo.require(p["epsilon"], query=p["query"], noise=p["noise"], **cost)
        x, name = release_data(p, ns, base)
        rel = odo.release(x, p["query"], p["epsilon"], noise=p["noise"], bounds=p["bounds"], **kw)
    except BudgetExceeded as exc:
        raise SpecError(str(exc), "budget") from None
    return ReleaseReport(rel, name=name, notes=notes, budget=odo.budget, spent=odo.spent, remaining=odo.remaining)


def _odometer(b: Mapping[str, Any], ns: Mapping[str, object]) -> PrivacyOdometer:
    """The odometer a ``[budget]`` table names (in the namespace) or describes (a new one)."""
    if "odometer" not in b:
        return PrivacyOdometer(b["epsilon"], b["delta"], concentrated_delta=b.get("concentrated_delta"))
    obj = ns.get(b["odometer"]) if ns else None
    if not isinstance(obj, PrivacyOdometer):
        got = "no such variable" if obj is None else f"a {type(obj).__name__}"
        raise SpecError(
            f"must name a PrivacyOdometer in the namespace, e.g. odo = sdp.PrivacyOdometer(1.0), got {got}",
            "budget.odometer",
        )
    return obj


def _run_noise(
    p: dict[str, Any], ns: Mapping[str, object], executor: cf.Executor | None, progress: bool | None, base: Path | None
) -> NoiseComparison:
    table = compare_noise(
        p["epsilon"], p["gamma"], delta=p.get("delta"), families=p["families"], reference=p["reference"]
    )
    return NoiseComparison(table=table, epsilon=p["epsilon"], delta=p.get("delta"))


#: compute -> runner (params, namespace, executor, progress, base directory) -> result
RUNNERS: dict[str, Callable[..., SpecResult]] = {
    "profile": _run_profile,
    "smoothed": _run_smoothed,
    "sweep": _run_sweep,
    "release": _run_release,
    "noise": _run_noise,
}
