"""Generate the packaged `demo` benchmark (harness/data/demo.json), deterministically.

A fictional region of towns, rivers, founders and trades. Facts are stated in
more than one chunk (town overviews, travel notes, both sides of a twinning), so
gold groups are redundancy-aware; questions chain 1 to 4 facts (hop 1..4).

    python scripts/make_demo.py            # rewrite harness/data/demo.json
    python scripts/make_demo.py --check    # exit 1 if the committed file is stale
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "harness" / "data" / "demo.json"

TOWNS = """Alderby Brackwater Caldmere Dunmarrow Eskerholm Fennick Gorsedale Hollinsford
Ibbotsley Jarrowby Kestrelmoor Lanwick Marrowdean Northwold Oxcombe Pellingham Quarrendon
Ravensholt Saltmarrow Thistleby Umberleigh Varrowick Wendlecombe Yarrowfield""".split()
RIVERS = """Amble Brune Colworth Dace Elvet Fallow Glaze Hurn Idden Kell Lusk Merrow""".split()
REGIONS = ["Upper Vale", "Saltmarsh Coast", "Northern Fells", "Greyheath Downs"]
TRADES = [
    "wool weaving",
    "salt panning",
    "clockmaking",
    "glassblowing",
    "boatbuilding",
    "cheese making",
    "slate quarrying",
    "paper milling",
    "rope making",
    "hop growing",
    "tin mining",
    "lace making",
]
FIRST = """Agnes Bartholomew Cecily Dunstan Edith Fulke Gilbert Hawise Isolde Jocelin
Lettice Matilda Nicholas Osbert Petronel Ranulf Sabina Theobald Ursula Walter Yvette
Aldred Beatrix Crispin""".split()
LAST = """Ashdown Blackmere Coldridge Drummond Evesham Farrow Gilchrist Holloway Ingram Kettle
Lockwood Marchbank Nettleton Oakshott Pennick Quayle Rendall Stainforth Tollemache Underhill
Vance Whitlock Yardley Ambrose""".split()
PROFESSIONS = [
    "surveyor",
    "wool merchant",
    "abbess",
    "engineer",
    "cartographer",
    "shipwright",
    "miller",
    "physician",
]


def build(seed: int = 7) -> dict:
    rng = random.Random(seed)
    towns = {}
    founders = rng.sample([f"{first} {last}" for first, last in zip(FIRST, LAST)], len(TOWNS))
    for i, name in enumerate(TOWNS):
        towns[name] = {
            "river": RIVERS[i % len(RIVERS)] if i < 12 else rng.choice(RIVERS),
            "region": REGIONS[i % len(REGIONS)],
            "trade": TRADES[(i * 5) % len(TRADES)],
            "founder": founders[i],
            "founded": 1100 + rng.randrange(0, 500),
            "twin": TOWNS[i + 1] if i % 2 == 0 else TOWNS[i - 1],
            "twinned": 1950 + (i // 2) * 3,
        }
    people = {}
    for i, name in enumerate(TOWNS):
        person = towns[name]["founder"]
        birth = TOWNS[(i + 7) % len(TOWNS)]
        people[person] = {"born": birth, "profession": rng.choice(PROFESSIONS), "town": name}

    corpus: dict[str, dict] = {}
    facts: dict[tuple[str, str], list[str]] = {}

    def add(cid: str, text: str, *keys: tuple[str, str]) -> None:
        corpus[cid] = {"content": text, "metadata": {"source_file": cid.split("_")[0] + ".txt"}}
        for key in keys:
            facts.setdefault(key, []).append(cid)

    for name, t in towns.items():
        add(
            f"{name}_overview",
            f"{name} is a market town in the {t['region']} region, on the banks of the River "
            f"{t['river']}. It received its charter in {t['founded']} and was laid out by its "
            f"founder, {t['founder']}.",
            (name, "river"),
            (name, "founder"),
        )
        add(
            f"{name}_economy",
            f"For centuries the economy of {name} has rested on {t['trade']}; the trade still "
            f"employs many households, and a small museum near the square records its history.",
            (name, "trade"),
        )
        add(
            f"{name}_twinning",
            f"{name} has been twinned with {t['twin']} since {t['twinned']}, and delegations "
            f"from both towns meet every summer.",
            (name, "twin"),
            (t["twin"], "twin"),
        )
    for i, (name, t) in enumerate(towns.items()):
        if i % 2 == 0:  # travel notes restate river and founder: redundant evidence
            add(
                f"{name}_travel",
                f"Travel notes: walkers arriving in {name} follow the towpath of the "
                f"{t['river']} to the statue of {t['founder']}, who planned the streets.",
                (name, "river"),
                (name, "founder"),
            )
        if i % 3 == 0:  # a guild record restates the trade
            add(
                f"{name}_guild",
                f"The guild rolls of {name} list more members in {t['trade']} than in any "
                f"other craft.",
                (name, "trade"),
            )
    for person, p in people.items():
        add(
            f"{person.replace(' ', '')}_biography",
            f"{person} was a {p['profession']} born in {p['born']}, remembered today as the "
            f"founder of {p['town']}.",
            (person, "born"),
            (p["town"], "founder"),
        )

    def g(key: tuple[str, str]) -> list[str]:
        return sorted(facts[key])

    queries = []
    order = list(TOWNS)
    rng.shuffle(order)
    for hop in (1, 2, 3, 4):
        for name in (order[((hop - 1) * 6 + j) % len(order)] for j in range(12)):
            t = towns[name]
            twin = towns[t["twin"]]
            founder = twin["founder"]
            birth = people[founder]["born"]
            if hop == 1:
                text = f"Which river flows through the town of {name} in the {t['region']}?"
                groups, answer = [g((name, "river"))], t["river"]
            elif hop == 2:
                text = f"Which river runs through the town that {name} is twinned with?"
                groups = [g((name, "twin")), g((t["twin"], "river"))]
                answer = twin["river"]
            elif hop == 3:
                text = f"Where was the founder of the town twinned with {name} born?"
                groups = [g((name, "twin")), g((t["twin"], "founder")), g((founder, "born"))]
                answer = birth
            else:
                text = (
                    "What trade sustains the birthplace of the founder of the twin of "
                    f"{name} today?"
                )
                groups = [
                    g((name, "twin")),
                    g((t["twin"], "founder")),
                    g((founder, "born")),
                    g((birth, "trade")),
                ]
                answer = towns[birth]["trade"]
            queries.append({"question": text, "gold_chunk_groups": groups, "answer": answer})
    for i, q in enumerate(queries, start=1):
        q["query_id"] = f"demo_{i:03d}"
        q["gold_chunk_ids"] = sorted({c for grp in q["gold_chunk_groups"] for c in grp})
    queries = [
        {k: q[k] for k in ("query_id", "question", "gold_chunk_ids", "gold_chunk_groups", "answer")}
        for q in queries
    ]
    return {
        "metadata": {
            "name": "demo",
            "description": "Fictional towns, rivers, founders and trades; generated by "
            "scripts/make_demo.py",
            "total_queries": len(queries),
            "total_corpus_chunks": len(corpus),
            "seed": seed,
        },
        "queries": queries,
        "corpus": corpus,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed file differs")
    args = parser.parse_args()
    text = json.dumps(build(), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run python scripts/make_demo.py", file=sys.stderr)
            return 1
        print(f"{OUT} is up to date")
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
