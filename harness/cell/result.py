"""The one result type: one system scored on one benchmark. `harness.evaluate` and a cell run
return it, a cell folder is its `to_disk` form and `Evaluation.from_disk` reads one back, and
compare, `Experiment` and the leaderboard consume it (MTEB's TaskResult is the model)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from harness.cell import store
from harness.cell.sections import SECTIONS
from harness.core import provenance
from harness.core.errors import HarnessError
from harness.core.files import to_json
from harness.core.run import Run
from harness.core.types import Benchmark


class Stored:
    """A cell's numbers as its folder holds them: the attributes of a fresh score
    (harness.cell.execute.Scored), with the statistics as they were stored."""

    def __init__(self, doc: Mapping[str, Any], values, strata):
        self.values, self.strata = values, strata
        self.n_groups: list[int] | None = None  # per_query.csv's, when read from there
        self.means = self.intervals = self.aggregated = doc["results"]
        self.variance = doc.get("variance") or {}
        self.semantic = doc.get("semantic")
        self.protocols = doc.get("protocols") or {}
        self.rag = doc.get("rag") or {}

    @property
    def ties(self):
        raise HarnessError(
            "per-query tie ranges are not stored in a cell folder (its metrics.json has the "
            "means' ranges); score the run with harness.evaluate to get them"
        )


@dataclass(eq=False)
class Evaluation:
    """One system scored on one benchmark. `scored` holds the per-query values and strata and
    computes the statistics when first asked for (fresh), or holds them as stored (read from a
    folder). `metrics` are the metrics shown (a folder may hold more); `benchmark` and `run`
    are there when it was scored in this process; `stale` is the leaderboard's mark for a cell
    computed on other data than most cells of its corpus."""

    scored: Any
    metrics: list[str]
    corpus: str
    retriever: str
    checksum: str
    depth: int
    query_ids: tuple[str, ...]
    config: dict[str, Any]
    path: Path | None = None
    benchmark: Benchmark | None = None
    run: Run | None = None
    record: dict[str, Any] = field(default_factory=dict)  # run coverage, diagnostics, label
    notes: list[str] = field(default_factory=list)
    timings: dict[str, Any] = field(default_factory=dict)
    strata_hint: str | None = None  # how to get semantic strata, when there are none
    skipped: bool = False  # shown from an up-to-date folder
    earlier: str | None = None  # what a cell written by an earlier version lacks (migrate)
    stale: bool = False
    loaded: dict[str, Any] | None = field(default=None, repr=False)  # metrics.json, as read

    # --- identity ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.retriever

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def relevance_level(self) -> int:
        return int((self.config.get("metrics") or {}).get("relevance_level", 1))

    @property
    def values(self) -> dict[str, np.ndarray]:
        """Metric -> per-query values in benchmark query order (NaN where undefined)."""
        return self.scored.values

    @property
    def strata(self) -> dict[str, Any]:
        """Stratification -> label per query, in query order."""
        return self.scored.strata

    @property
    def aggregated(self) -> dict[str, Any]:
        """metrics.json's `results`: means, CIs and tie ranges, overall and per stratum."""
        return self.scored.aggregated

    @property
    def date(self) -> str | None:
        """When the folder was written (timings.json), None for a fresh result."""
        return self.timings.get("date")

    # --- what metrics.json holds ------------------------------------------------------------

    @property
    def doc(self) -> dict[str, Any]:
        """metrics.json (schema metrics/3): as read, or built now (every statistic computed)."""
        if self.loaded is None:  # serialized once, by files()
            self.loaded = self._metrics_doc()
        return self.loaded

    def _metrics_doc(self) -> dict[str, Any]:
        """Everything about the cell except timings, so reruns give byte-identical files."""
        bench, scored = self.benchmark, self.scored
        if bench is None:
            raise HarnessError("this result holds no benchmark to describe")
        record = self.record
        diagnostics = record.get("diagnostics")
        if diagnostics is None:
            from harness.strata.diagnostics import gold_redundancy

            similarity = record.get("similarity")
            diagnostics = {"gold_redundancy": gold_redundancy(bench), "similarity": similarity}
        return {
            "schema": store.SCHEMA,
            "corpus": bench.name,
            "retriever": self.retriever,
            "benchmark": {
                "checksum": bench.checksum,
                "source": bench.source,
                "n_queries": len(bench.queries),
                "n_chunks": len(bench.corpus),
                "metadata": bench.metadata,
            },
            "depth": self.depth,
            "metrics": list(self.values),  # every metric scored (`metrics` are those shown)
            "results": scored.aggregated,
            "config": _portable(self.config),
            "provenance": {
                "versions": provenance.versions(_model_packages(self.config)),
                "git": provenance.git_state(),
            },
            "display_name": record.get("display_name", self.retriever),
            "variant": record.get("variant", {}),
            "variance": scored.variance,
            "semantic": scored.semantic,
            "run": record.get("run") or {},
            **({"protocols": scored.protocols} if scored.protocols else {}),
            **({"rag": scored.rag} if scored.rag else {}),
            "diagnostics": diagnostics,
        }

    def files(self) -> dict[str, str]:
        """The text of every file of the cell folder."""
        if self.benchmark is None or self.run is None:
            raise HarnessError("only a result scored in this process can be written")
        bench, run = self.benchmark, self.run
        date = datetime.now(timezone.utc).isoformat(timespec="seconds")
        return {
            "metrics.json": to_json(self.doc),
            "per_query.csv": store.per_query_csv(bench, self.strata, self.values),
            "run.trec": store.run_trec(bench, run),
            "qrels.trec": store.qrels_trec(bench),
            "config.yaml": _yaml(self.config),
            "timings.json": to_json({"date": date, **self.timings}),
        }

    # --- disk -------------------------------------------------------------------------------

    def to_disk(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write the cell folder (metrics.json, per_query.csv, run.trec, qrels.trec,
        config.yaml, timings.json) atomically; a folder holding files is replaced only with
        `overwrite=True`."""
        folder = Path(folder).expanduser()
        if folder.is_dir() and any(folder.iterdir()) and not overwrite:
            raise HarnessError(
                f"{folder} already holds files; pick another folder or pass overwrite=True"
            )
        store.write_cell(folder, self.files())
        self.path = folder
        return folder

    save = to_disk

    @classmethod
    def from_disk(cls, folder: str | Path) -> Evaluation:
        """A cell folder read back, metrics.json migrated to the current schema
        (store.migrate); per_query.csv checked against its means."""
        path = Path(folder)
        doc, earlier, renames = store.read_metrics(path, with_earlier=True)
        per_query_file = path / "per_query.csv"
        if not per_query_file.is_file():
            raise HarnessError(
                f"{path} is not a result folder (no per_query.csv); give "
                "results/<corpus>/<retriever>"
            )
        query_ids, strata, groups, values = store.read_per_query(per_query_file)
        values = {renames.get(m, m): v for m, v in values.items()}
        if len(query_ids) != doc["benchmark"].get("n_queries"):
            raise HarnessError(
                f"{per_query_file}: {len(query_ids)} rows but metrics.json says "
                f"{doc['benchmark'].get('n_queries')} queries; the folder is damaged, rerun "
                "that cell"
            )
        missing = [m for m in doc["metrics"] if m not in values]
        if missing:  # compare and `leaderboard --check` must gate every metric the cell names
            raise HarnessError(
                f"{per_query_file}: no column for {missing[0]}"
                f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}, which "
                "metrics.json names; the folder is damaged, rerun that cell"
            )
        store.check_means(per_query_file, values, doc)
        try:
            timings = json.loads((path / "timings.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            timings = {}
        result = cls.from_doc(doc, query_ids=query_ids, strata=strata, values=values, path=path)
        result.scored.n_groups = groups
        result.timings = timings if isinstance(timings, dict) else {}
        result.earlier = earlier
        return result

    @classmethod
    def from_doc(cls, doc: dict[str, Any], *, query_ids=(), strata=None, values=None, path=None):
        """A result from a metrics.json document (and, optionally, its per-query values)."""
        return cls(
            Stored(doc, values or {}, strata or {}),
            list(doc["metrics"]),
            str(doc["corpus"]),
            str(doc["retriever"]),
            str(doc["benchmark"]["checksum"]),
            int(doc["depth"]),
            tuple(query_ids),
            doc["config"],
            path=path,
            record={k: doc.get(k) for k in ("run", "diagnostics", "display_name", "variant")},
            loaded=doc,
        )

    # --- the leaderboard's accessors --------------------------------------------------------

    def _node(self, stratification: str, label: str | None) -> Mapping[str, Any] | None:
        res = self.aggregated
        if stratification == "overall":
            return res.get("overall")
        return (res.get(stratification) or {}).get(label)

    def mean(self, metric: str, stratification: str = "overall", label: str | None = None):
        """The mean of `metric` (a fraction) over a stratum, or None."""
        node = self._node(stratification, label)
        return (node.get("mean") or {}).get(metric) if node else None

    def ci(self, metric: str, stratification: str = "overall", label: str | None = None):
        """The (low, high) bootstrap interval of the mean (fractions), or None."""
        node = self._node(stratification, label)
        bounds = ((node or {}).get("ci") or {}).get(metric)
        return tuple(bounds) if bounds and None not in bounds else None

    def n(self, stratification: str = "overall", label: str | None = None) -> int | None:
        """The number of queries in a stratum, or None."""
        node = self._node(stratification, label)
        return node.get("n") if node else None

    # --- DataFrames -------------------------------------------------------------------------

    def _strata_rows(self, agg: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """(overall, its summary), then (`<stratification>=<label>`, summary) per stratum."""
        rows = [("overall", agg["overall"])]
        for strat, by in agg.items():
            if strat != "overall":
                rows += [(f"{strat}={label}", s) for label, s in by.items()]
        return rows

    def _frame(self, records, index):
        import pandas as pd

        return pd.DataFrame.from_records(records).set_index(index)

    @property
    def means(self):
        """DataFrame: one row per stratum (overall, hop=1, ...), columns n and each metric's
        mean (fractions, not %); no statistics are computed for it."""
        return self._means_frame(self.scored.means, ci=False)

    @property
    def summary(self):
        """DataFrame: one row per stratum (overall, hop=1, ...), columns n, each metric's mean
        and, with bootstrap CIs, `<metric> ci_low` / `<metric> ci_high` (fractions, not %).
        The CIs are bootstrapped on first use (`means` has the same rows without them)."""
        return self._means_frame(self.scored.intervals, ci=True)

    def _means_frame(self, summaries, ci: bool):
        records = []
        for stratum, s in self._strata_rows(summaries):
            rec: dict[str, Any] = {"stratum": stratum, "n": s["n"]}
            rec.update({m: np.nan if s["mean"][m] is None else s["mean"][m] for m in self.metrics})
            for m in self.metrics if ci and "ci" in s else ():
                rec[f"{m} ci_low"], rec[f"{m} ci_high"] = s["ci"][m] or (np.nan, np.nan)
            records.append(rec)
        return self._frame(records, "stratum")

    @property
    def variance(self):
        """DataFrame indexed by (metric, stratification): σ_overall, σ_within, VRR, its chance
        level, the chance-corrected VRR, the permutation p-value, the number of strata and the
        queries pooled as `small` (docs/stratification.md#variance-explained-vrr)."""
        records = [
            {"metric": m, "stratification": strat, "sigma_overall": block["sigma_overall"], **e}
            for m in self.metrics
            for block in [self.scored.variance[m]]
            for strat, e in block["by"].items()
        ]
        return self._frame(records, ["metric", "stratification"])

    @property
    def beyond_hop(self):
        """DataFrame indexed by (metric, signal): what Δ (dispersion) and J (alignment) explain
        once hop is known: VRR of hop, of the hop × tertile cells, the gain, its chance level
        (tertiles shuffled within hop), the chance-corrected gain and the p-value; None
        without semantic strata."""
        records = [
            {"metric": m, "signal": signal, **e}
            for m in self.metrics
            for signal, e in (self.scored.variance[m].get("beyond_hop") or {}).items()
        ]
        return self._frame(records, ["metric", "signal"]) if records else None

    @property
    def population(self):
        """DataFrame indexed by metric: the plain mean, the population-weighted estimate over
        the semantic clusters (each weighted by its share of the corpus's chunks), its bounds,
        the uncovered mass and the plain mean's estimated bias; None without semantic strata."""
        if self.scored.semantic is None:
            return None
        est = self.scored.semantic["population"]["estimate"]
        records = []
        for m in self.metrics:
            e = dict(est[m])
            lo, hi = e.pop("bounds") or (None, None)
            blo, bhi = e.pop("bias_bounds") or (None, None)
            records.append(
                {"metric": m, **e, "low": lo, "high": hi, "bias_low": blo, "bias_high": bhi}
            )
        return self._frame(records, "metric").astype(float)

    @property
    def coverage_types(self):
        """DataFrame of end-to-end RAG's coverage types (docs/rag.md, RARE's Figure 7): per K
        and type (intersection, retrieval_only, parametric_only, complementary), the number
        of queries, their share and the E2E accuracy within them; None without e2e@K and
        closed_book."""
        types = self.scored.rag.get("coverage_types")
        if not types:
            return None
        records = [
            {"k": int(k), "type": t, **{c: by[t][c] for c in ("n", "share", "accuracy")}}
            for k, by in types.items()
            for t in by
            if t != "queries"
        ]
        return self._frame(records, ["k", "type"])

    @property
    def deflection(self):
        """DataFrame of the retrieval-side deflection section (docs/protocols.md): per
        answerable value (yes / partial / no), the number of queries and the top-1 score's
        distribution, plus AUROC columns for telling answerable from unanswerable queries by
        the top score; None when every query is answerable."""
        block = self.scored.protocols.get("deflection")
        if block is None:
            return None
        records = []
        for value, summary in block["top1"].items():
            rec = {"answerable": value, "queries": block["n"].get(value, 0)}
            rec.update({f"top1_{k}": v for k, v in summary.items()})
            records.append(rec)
        df = self._frame(records, "answerable")
        df.attrs["auroc"] = dict(block["auroc"])
        df.attrs["distractors"] = dict(block.get("distractors") or {})
        return df

    @property
    def per_query(self):
        """DataFrame indexed by query id: its strata, number of gold groups, every metric."""
        import pandas as pd

        data: dict[str, Any] = {k: list(v) for k, v in self.strata.items()}
        if self.benchmark is not None:
            data["n_groups"] = [len(q.groups) for q in self.benchmark.queries]
        elif getattr(self.scored, "n_groups", None) is not None:
            data["n_groups"] = list(self.scored.n_groups)
        data.update(self.values)
        return pd.DataFrame(data, index=pd.Index(list(self.query_ids), name="query_id"))

    @property
    def ties(self):
        """DataFrame indexed by (stratum, metric): the mean, the lowest and highest mean over
        every order of tied scores (`low`, `high`), the expected mean under a random order
        (`expected`, NaN where not tractable) and the number of queries whose value depends
        on ties (`queries`); fractions. A metric without a tie analysis (Bpref, infAP,
        gm_map, IPrec, ERR, Judged, the counts) has <NA> there, not 0. See
        docs/metrics.md#ties."""
        records = []
        for stratum, s in self._strata_rows(self.aggregated):
            for m in self.metrics:
                low, high = (s.get("ties") or {}).get(m) or (np.nan, np.nan)
                expected = (s.get("ties_expected") or {}).get(m)
                records.append(
                    {
                        "stratum": stratum,
                        "metric": m,
                        "mean": np.nan if s["mean"][m] is None else s["mean"][m],
                        "low": low,
                        "high": high,
                        "expected": np.nan if expected is None else expected,
                        "queries": (s.get("tie_queries") or {}).get(m),
                    }
                )
        frame = self._frame(records, ["stratum", "metric"])
        frame["queries"] = frame["queries"].astype("Int64")  # <NA>: no tie analysis
        return frame

    @property
    def per_query_ties(self):
        """DataFrame indexed by query id: `<metric> low`, `<metric> high` and `<metric>
        expected` per metric, each query's range over the orders of its tied scores (NaN
        where the metric is undefined, or the expectation not tractable)."""
        import pandas as pd

        tied = self.scored.ties
        data: dict[str, Any] = {}
        for m in self.metrics:
            t = tied.get(m)
            if t is not None:
                data |= {f"{m} low": t.low, f"{m} high": t.high, f"{m} expected": t.expected}
        return pd.DataFrame(data, index=pd.Index(list(self.query_ids), name="query_id"))

    def to_latex(self, *, caption: str | None = None, label: str | None = None) -> str:
        """The summary's means as a booktabs LaTeX table with two decimals: shares in percent
        (* 100), metrics that are not shares (answer_rank, a mean rank) as they are, counts
        (NumRet's totals) whole."""
        from metrics.registry import aggregate_of, in_percent

        df = self.summary[["n", *self.metrics]].copy()
        shares = [m for m in self.metrics if in_percent(m)]
        df[shares] = df[shares] * 100
        whole = {
            m: (lambda v: "-" if v != v else f"{v:.0f}")
            for m in self.metrics
            if aggregate_of(m) == "sum"
        }
        ranked = f"{len(self.run)} queries ranked" if self.run is not None else "from disk"
        cap = caption or f"{self.name} on {self.corpus} ({ranked})"
        return df.to_latex(
            float_format="%.2f",
            formatters=whole or None,
            na_rep="-",
            caption=cap,
            label=label,
            escape=True,
        )

    def __repr__(self) -> str:
        return f"<Evaluation {self.name} on {self.corpus}: {len(self.metrics)} metrics>"

    def _repr_html_(self) -> str:
        """What a notebook shows: the summary table, then what the terminal says under it
        (queries left out of a mean) and the notes (logged, so a notebook hides them)."""
        import html

        said = [*self._excluded(), *self.notes]
        items = "".join(f"<li>{html.escape(line)}</li>" for line in said)
        return self.summary._repr_html_() + (f"<ul>{items}</ul>" if items else "")

    def _excluded(self) -> list[str]:
        excluded = self.scored.means["overall"].get("excluded") or {}
        return [
            f"{m}: {n} of {self.n_queries} queries without a value (no gold, no relevant "
            f"document at this level) are left out of its mean"
            for m, n in excluded.items()
            if n and m in self.metrics
        ]


def _portable(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The config as metrics.json records it: without the folders the run read and wrote
    (results.dir, strata.dir, cache_dir), which say where, not what; config.yaml keeps them."""
    out = dict(cfg)
    for section in ("results", "strata"):
        if isinstance(out.get(section), Mapping):
            out[section] = {k: v for k, v in out[section].items() if k != "dir"}
    out.pop("cache_dir", None)
    return out


def _yaml(cfg: Mapping[str, Any]) -> str:
    from omegaconf import OmegaConf

    return OmegaConf.to_yaml(OmegaConf.create(dict(cfg)))


def _model_packages(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The model libraries' names when the cell ran a model (a dense or hybrid retriever, a
    plug-in, a section whose metrics a model computes): their versions can change its
    numbers."""
    retriever = config.get("retriever") or {}
    ran_model = (
        retriever.get("type") in ("dense", "hybrid")
        or retriever.get("_target_") not in (None, "", "???")
        or retriever.get("type") == "python"
        or any(config.get(s.key) for s in SECTIONS)
    )
    return provenance.MODEL_PACKAGES if ran_model else ()
