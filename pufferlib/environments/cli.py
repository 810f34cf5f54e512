"""`puffer envs`: the registry with availability, as a table or as JSON."""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("envs", help="list registered environment bindings and whether they are installed")
    p.add_argument("--json", action="store_true", help="print a JSON list of bindings")
    p.add_argument("--family", help="only this family (e.g. ocean)")
    p.add_argument(
        "--all",
        action="store_true",
        help="also the catalogued names that are made on demand (e.g. all 57 Atari games)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pufferlib.environments as envs

    if args.all:
        rows = [envs.get(name).to_json() for name in envs.catalog(args.family)]
    else:
        rows = [b.to_json() for b in envs.bindings(args.family)]
    if args.family and not rows:
        families = sorted({b.family for b in envs.bindings()})
        raise SystemExit(f"puffer envs: no family {args.family!r}; families: {', '.join(families)}")
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        if r["unavailable"]:
            status = f"unavailable: {r['unavailable']}"
        else:
            status = "ok" if r["available"] else f"missing {', '.join(r['missing'])}: {r['install_hint']}"
        kind = "multi" if r["multiagent"] else "single"
        print(f"{r['name']:<{width}}  {kind:<6}  {status}")
    available = sum(r["available"] for r in rows)
    print(f"{available}/{len(rows)} bindings available")
    if not args.all:
        extra = len(envs.catalog(args.family)) - len(rows)
        if extra:
            print(f"(+{extra} more made on demand: puffer envs --all)")
    return 0
