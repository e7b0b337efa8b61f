"""Build the `protocols` test benchmark: a GaRAGe / CRUMQs-like RedQA file cut from General-Wiki.

The evaluation protocols of issue 17 (unanswerable queries, passage labels, dated relevance,
question attributes as strata, grounding bins, deflection) need a benchmark that carries every
new RedQA key at once. Reference data may not be committed, so tests build this one at run time
from $HARNESS_DATA_DIR/redqa/general-wiki.json (tests/conftest.py: `protocols_benchmark_path`).

What it holds and why:
- 60 General-Wiki queries (hops 1-4, 15 each) whose gold chunks are pairwise disjoint, so that
  removing one query's gold, or dating or labelling it, never touches another query's gold.
- 10 fully unanswerable queries (CRUMQs): all their gold chunks are removed from the corpus,
  every group is `group_present: false`, `answerable: false`. Their answer is a span of a
  removed chunk that no remaining chunk contains, so the information is truly absent.
- 10 partially unanswerable queries (hop >= 2): some, not all, groups removed, those groups
  `group_present: false`, `answerable: "partial"`.
- 40 answerable queries: `answerable: true`, or the key left out (the default is tested too).
- `answer` / `answers`: General-Wiki has none, so each query gets a span found verbatim in its
  last gold group's chunk (the title's entity when the text names it, else a capitalised
  phrase), sometimes with a second form (the title with its qualifier).
- `metadata`: GaRAGe's question attributes (dynamism, complexity, popularity, source,
  category; category left out of a few) and the numeric `question_words` for tertile strata.
- `date` on every query (2024) and on the gold and labelled chunks: some fast questions have a
  gold chunk more than 7 days older than the question (outdated by age), others only recent ones.
- `labels` (GaRAGe): gold chunks ANSWER-THE-QUESTION (a few of fast questions' OUTDATED), and
  word-overlap neighbours RELATED / UNKNOWN / IRRELEVANT (OUTDATED for some fast questions);
  unanswerable queries get RELATED / OUTDATED neighbours of their removed gold (deflection
  distractors) or no labels at all. A few queries carry no labels.

The same source gives byte-identical output (numpy Generator with a fixed seed, sorted keys).

    python scripts/make_protocols_fixture.py --out /tmp/protocols.json
    python scripts/make_protocols_fixture.py --source general-wiki.json --out protocols.json
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import math
import os
import re
import sys
import unicodedata
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import numpy as np

SEED = 17
PER_HOP = {1: 15, 2: 15, 3: 15, 4: 15}
ROLES = {"no": 10, "partial": 10, "yes": 40}
DYNAMISM = (("fast", 0.4), ("slow", 0.3), ("static", 0.3))
POPULARITY = (("head", 0.3), ("torso", 0.4), ("tail", 0.3))
SOURCE = (("web", 0.75), ("private", 0.25))
FAST_WINDOW = 7  # days a fast question's passage stays current (GaRAGe)
QUESTION_YEAR = date(2024, 1, 1)

# Keyword -> GaRAGe category, first match wins; "People & Society" otherwise.
CATEGORIES = (
    ("Sports", "football league olympic olympics championship team player cup season club"),
    (
        "Arts & Entertainment",
        "film album song band singer actor actress series episode television music studio",
    ),
    ("Books & Literature", "novel book author poet poem magazine published writer"),
    (
        "Law & Government",
        "president party parliament court law election government minister legislature",
    ),
    ("Travel", "airport city river mountain island county capital located country"),
    ("Business & Industry", "company corporation business bank founded brand"),
    ("Science", "science species chemical university physics disease discovered"),
)
STOP = frozenset(
    """a an the of and or in on at to for from by with as is was were be been are it its this
    that which who whom whose what when where why how did does do has have had not but than
    then there their they he she his her him i you we our your one two into after before
    during between about over under also most more many much any some such these those""".split()
)
# Capitalised words that open sentences rather than name things.
OPENERS = frozenset(
    """The A An In On At It He She His Her This That These Those They Its As After Before
    During When While Since From For With By Of To And But Also However There Their""".split()
)
CONNECTORS = frozenset("of the and de du da di von van la le del der".split())
WORD = re.compile(r"\w(?:[\w'’.-]*\w)?")


def default_source() -> Path:
    """$HARNESS_DATA_DIR/redqa/general-wiki.json (../shared/data beside the checkout without it)."""
    env = os.environ.get("HARNESS_DATA_DIR")
    root = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    return root / "redqa" / "general-wiki.json"


def normalise(text: str, *, spaces: bool = False) -> str:
    """Answer-matching form: lowercase, punctuation dropped (or made a space), articles
    dropped, whitespace collapsed."""
    out = "".join(
        (" " if spaces else "") if unicodedata.category(ch).startswith("P") else ch
        for ch in text.lower()
    )
    return " ".join(w for w in out.split() if w not in ("a", "an", "the"))


def found_in(answer: str, texts: list[tuple[str, str]]) -> bool:
    """Whether any (normalised, spaced) text holds the answer as a plain substring: stricter
    than word-boundary containment, and under both ways of dropping punctuation."""
    a, b = normalise(answer), normalise(answer, spaces=True)
    return any(a and a in t1 or b and b in t2 for t1, t2 in texts)


def title_of(chunk_id: str) -> tuple[str, str]:
    """(entity, qualifier) named by a chunk id such as `Federal_Assembly_(Switzerland).txt_…`."""
    name = html.unescape(chunk_id.split(".txt_")[0]).replace("_", " ").strip()
    m = re.fullmatch(r"(.*?)\s*\(([^()]*)\)", name)
    return (m.group(1).strip(), m.group(2).strip()) if m else (name, "")


def phrases(text: str) -> list[str]:
    """Capitalised phrases of `text`, verbatim, multi-word ones first (each in text order)."""
    runs: list[list[re.Match]] = []
    current: list[re.Match] = []
    for m in WORD.finditer(text):
        word = m.group()
        # Words join a phrase only when a single space separates them (punctuation ends it).
        joined = bool(current) and text[current[-1].end() : m.start()] == " "
        # A hyphenated word is a name only when every part is ("Spanish-Swiss", not
        # "English-language").
        upper = all(part[:1].isupper() or part[:1].isdigit() for part in word.split("-"))
        upper = upper and word[0].isupper()
        if upper and joined:
            current.append(m)
        elif upper and word not in OPENERS:
            runs.append(current)
            current = [m]
        elif joined and word in CONNECTORS:
            current.append(m)
        else:
            runs.append(current)
            current = []
    runs.append(current)
    spans = []
    for run in runs:
        while run and run[-1].group() in CONNECTORS:
            run = run[:-1]
        if run:
            spans.append(text[run[0].start() : run[-1].end()])
    multi = [s for s in dict.fromkeys(spans) if " " in s]
    single = [s for s in dict.fromkeys(spans) if " " not in s and len(s) >= 4]
    return multi + single


def answer_forms(chunk_id: str, text: str) -> list[tuple[str, str | None]]:
    """Candidate (answer, second form) pairs for a chunk, best first: its title's entity when
    the text names it, then its capitalised phrases."""
    entity, qualifier = title_of(chunk_id)
    out: list[tuple[str, str | None]] = []
    if entity and entity in text:
        out.append((entity, f"{entity} ({qualifier})" if qualifier else None))
    out += [(p, None) for p in phrases(text) if p != entity]
    return out


def tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOP and len(w) > 2}


def pick(rng: np.random.Generator, options: tuple[tuple[str, float], ...]) -> str:
    names = [n for n, _ in options]
    return names[int(rng.choice(len(names), p=[p for _, p in options]))]


def category(question: str, titles: list[str]) -> str:
    words = tokens(question + " " + " ".join(titles))
    for name, keys in CATEGORIES:
        if words & set(keys.split()):
            return name
    return "People & Society"


def complexity(rng: np.random.Generator, question: str, hop: int) -> str:
    """GaRAGe complexity: mostly multi-hop for hop >= 2; else read off the question's wording."""
    q = question.lower()
    if hop >= 2 and rng.random() < 0.65:
        return "multi-hop"
    if re.search(r"\bhow many\b|\btotal\b|\bsum\b|\bcombined\b|\baverage\b", q):
        return "aggregation"
    if re.search(r"\bfirst\b|\bearlier\b|\blater\b|\bmore\b|\blarger\b|\bolder\b|\blonger\b", q):
        return "comparison"
    if re.search(r"\blist\b|\bwhich two\b|\bboth\b|\bname the\b", q):
        return "set"
    if re.search(r"\bratio\b|\bdifference\b|\bcalculate\b|\bpercent", q):
        return "post-processing-heavy"
    if hop >= 2:
        return str(rng.choice(["comparison", "aggregation", "set", "post-processing-heavy"]))
    if re.search(r"\bin \d{4}\b|\bwhen\b|\bafter\b|\bbefore\b|\bduring\b", q):
        return "simple-w-condition"
    return "simple-w-condition" if rng.random() < 0.3 else "simple"


class Neighbours:
    """Idf-weighted word overlap between a text and every chunk: BM25-like neighbours."""

    def __init__(self, corpus: dict[str, str]):
        self.ids = sorted(corpus)
        self.postings: dict[str, list[int]] = {}
        for i, cid in enumerate(self.ids):
            for w in tokens(corpus[cid]):
                self.postings.setdefault(w, []).append(i)
        n = len(self.ids)
        self.idf = {w: math.log(1 + n / len(p)) for w, p in self.postings.items()}

    def rank(self, text: str, exclude: set[str], depth: int = 20) -> list[str]:
        score: Counter[int] = Counter()
        for w in tokens(text):
            for i in self.postings.get(w, ()):
                score[i] += self.idf[w]
        order = sorted(score, key=lambda i: (-score[i], self.ids[i]))
        return [self.ids[i] for i in order if self.ids[i] not in exclude][:depth]


def build(source: Path, *, seed: int = SEED) -> dict:
    """The fixture benchmark as a RedQA dict, from the General-Wiki file at `source`."""
    raw = source.read_bytes()
    data = json.loads(raw)
    corpus: dict[str, str] = {cid: c["content"] for cid, c in data["corpus"].items()}
    normed = {cid: (normalise(t), normalise(t, spaces=True)) for cid, t in corpus.items()}
    rng = np.random.default_rng(seed)

    pool = sorted(
        (q for q in data["queries"] if q["gold_chunk_groups"]),
        key=lambda q: q["query_id"],
    )
    pool = [pool[i] for i in rng.permutation(len(pool))]
    deck = [r for r, n in ROLES.items() for _ in range(n)]
    deck = [deck[i] for i in rng.permutation(len(deck))]

    chosen: list[dict] = []
    used: set[str] = set()
    hops: Counter[int] = Counter()
    for q in pool:
        groups = [sorted(dict.fromkeys(g)) for g in q["gold_chunk_groups"]]
        gold = {c for g in groups for c in g}
        hop = len(groups)
        if hops[hop] >= PER_HOP.get(hop, 0) or gold & used or any(c not in corpus for c in gold):
            continue
        last = groups[-1][0]
        forms = answer_forms(last, corpus[last])
        if not forms:
            continue
        rest = [normed[c] for c in corpus if c not in gold]
        hidden = [f for f in forms if not any(found_in(a, rest) for a in f if a)]
        # Groups that can go without taking a member another group still needs.
        removable = [
            i
            for i, g in enumerate(groups)
            if not set(g) & {c for j, h in enumerate(groups) if j != i for c in h}
        ]
        feasible = {"yes": True, "no": bool(hidden), "partial": hop >= 2 and bool(removable)}
        slot = next((i for i, r in enumerate(deck) if feasible[r]), None)
        if slot is None:
            continue
        role = deck.pop(slot)
        if role == "partial":
            k = int(rng.integers(1, min(hop - 1, len(removable)) + 1))
            gone = sorted(int(i) for i in rng.choice(removable, size=k, replace=False))
        else:
            gone = list(range(hop)) if role == "no" else []
        chosen.append(
            {"q": q, "groups": groups, "role": role, "gone": gone, "forms": forms, "hidden": hidden}
        )
        used |= gold
        hops[hop] += 1
        if not deck:
            break
    if deck:
        raise SystemExit(f"{source}: could not fill the fixture (roles left: {Counter(deck)})")

    removed = {c for ch in chosen for i in ch["gone"] for c in ch["groups"][i]}
    kept = {cid: t for cid, t in corpus.items() if cid not in removed}
    near = Neighbours(kept)
    chunk_dates: dict[str, date] = {}

    def set_date(cid: str, when: date) -> None:
        chunk_dates.setdefault(cid, when)

    queries = []
    for n, ch in enumerate(sorted(chosen, key=lambda c: c["q"]["query_id"])):
        q, groups, role, gone = ch["q"], ch["groups"], ch["role"], ch["gone"]
        hop = len(groups)
        asked = QUESTION_YEAR + timedelta(days=int(rng.integers(0, 366)))
        present = [i not in gone for i in range(hop)]
        # A redundant group (two chunks, one piece) lets an OUTDATED member leave a current one.
        redundant = any(len(g) > 1 for i, g in enumerate(groups) if present[i])
        dyn = "fast" if redundant and rng.random() < 0.8 else pick(rng, DYNAMISM)
        gold_here = [c for i, g in enumerate(groups) if present[i] for c in g]

        # Dates: fast questions are either all-recent or have one stale gold chunk.
        spare: str | None = None  # a member of a largest present group
        if gold_here:
            biggest = max(len(g) for i, g in enumerate(groups) if present[i])
            largest = [g for i, g in enumerate(groups) if present[i] and len(g) == biggest]
            spare = largest[int(rng.integers(len(largest)))][-1]
        stale = spare if dyn == "fast" and rng.random() < 0.5 else None
        for c in gold_here:
            if dyn == "fast":
                back = int(rng.integers(8, 400)) if c == stale else int(rng.integers(0, 8))
            else:
                back = int(rng.integers(0, 1500))
            set_date(c, asked - timedelta(days=back))

        # Labels.
        labels: dict[str, str] | None = {}
        exclude = used | set(gold_here)
        if role == "no":
            # Distractors for the deflection section: neighbours of the removed gold.
            if rng.random() < 0.6:
                text = q["question"] + " " + " ".join(corpus[c] for g in groups for c in g)
                ranked = near.rank(text, exclude, depth=3)
                for j, c in enumerate(ranked[: int(rng.integers(1, 4))]):
                    labels[c] = "OUTDATED" if j == 1 else "RELATED"
                    set_date(c, asked - timedelta(days=int(rng.integers(0, 900))))
            else:
                labels = None
        elif rng.random() < 0.1:
            labels = None
        else:
            for c in gold_here:
                labels[c] = "ANSWER-THE-QUESTION"
            if dyn == "fast" and (redundant or rng.random() < 0.15):
                # One gold chunk superseded: labelled OUTDATED and dated so; in a redundant
                # group when there is one, so the piece keeps a current member.
                c = stale or spare
                labels[c] = "OUTDATED"
                chunk_dates[c] = min(chunk_dates[c], asked - timedelta(days=30))
            ranked = near.rank(q["question"], exclude, depth=25)
            n_rel, n_unk = int(rng.integers(0, 3)), int(rng.integers(0, 2))
            n_irr = int(rng.integers(0, 5))
            if rng.random() < 0.2:
                # A noisy retrieval: mostly irrelevant passages (grounding bin "<33%").
                n_rel, n_unk, n_irr = 0, 0, 2 * len(gold_here) + 1
            for c in ranked[:n_rel]:
                labels[c] = "RELATED"
            for c in ranked[n_rel : n_rel + n_unk]:
                labels[c] = "UNKNOWN"
            if dyn == "fast" and len(ranked) > 4 and rng.random() < 0.3:
                labels[ranked[4]] = "OUTDATED"
            for c in ranked[len(ranked) - n_irr :]:
                labels[c] = "IRRELEVANT"
            for c in labels:
                set_date(c, asked - timedelta(days=int(rng.integers(0, 900))))

        forms = ch["hidden"] if role == "no" else ch["forms"]
        answer, variant = forms[0]
        meta = {
            "dynamism": dyn,
            "complexity": complexity(rng, q["question"], hop),
            "popularity": pick(rng, POPULARITY),
            "source": pick(rng, SOURCE),
            "question_words": len(q["question"].split()),
        }
        if n % 12 != 5:
            meta["category"] = category(q["question"], [title_of(c)[0] for g in groups for c in g])
        rec: dict = {
            "query_id": q["query_id"],
            "question": q["question"],
            "gold_chunk_groups": groups,
            "date": asked.isoformat(),
            "metadata": meta,
        }
        if role != "yes" or n % 2 == 0:
            rec["group_present"] = present
        if role != "yes" or n % 4 != 3:
            rec["answerable"] = {"yes": True, "no": False, "partial": "partial"}[role]
        if variant is None:
            rec["answer"] = answer
        elif n % 3 == 0:
            rec["answer"], rec["answers"] = answer, [answer, variant]
        else:
            rec["answers"] = [answer, variant]
        if labels is not None:
            rec["labels"] = labels
        queries.append(rec)

    out_corpus = {}
    for cid in sorted(kept):
        entry: dict = {"content": kept[cid]}
        if cid in chunk_dates:
            entry["date"] = chunk_dates[cid].isoformat()
        out_corpus[cid] = entry
    roles = Counter(ch["role"] for ch in chosen)
    return {
        "metadata": {
            "name": "protocols",
            "description": "GaRAGe/CRUMQs-like test benchmark cut from General-Wiki by "
            "scripts/make_protocols_fixture.py (synthetic answers, labels, dates, fields)",
            "source": source.name,
            "source_sha256": hashlib.sha256(raw).hexdigest(),
            "seed": seed,
            "total_queries": len(queries),
            "answerable": {"yes": roles["yes"], "partial": roles["partial"], "no": roles["no"]},
            "hops": {str(h): hops[h] for h in sorted(hops)},
            "removed_chunks": sorted(removed),
            "total_corpus_chunks": len(out_corpus),
        },
        "queries": queries,
        "corpus": out_corpus,
    }


def render(bench: dict) -> str:
    """The file's text: sorted keys, UTF-8 as is, one trailing newline."""
    return json.dumps(bench, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


def write(source: Path, out: Path, *, seed: int = SEED) -> Path:
    """Build from `source` and write to `out` atomically; returns `out`."""
    text = render(build(source, seed=seed))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=default_source(), help="general-wiki.json")
    parser.add_argument("--out", type=Path, required=True, help="where to write the fixture JSON")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    if not args.source.is_file():
        print(
            f"error: source not found: {args.source}; set HARNESS_DATA_DIR or pass --source",
            file=sys.stderr,
        )
        return 2
    print(write(args.source, args.out, seed=args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
