"""``python -m laycert prove|validate FILE...`` (also the ``laycert-py`` script): proves rule
files or validates pair logs with the installed package; the pre-commit hook runs this.
Exit 0 when every rule is PROVED, 1 on a REFUTED rule, 3 on UNKNOWN (0 with
``--allow-unknown``), 2 on bad input."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import LaycertError, prove, validate


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="laycert-py", description=__doc__)
    p.add_argument("command", choices=["prove", "validate"])
    p.add_argument("files", nargs="*")
    p.add_argument("--allow-unknown", action="store_true")
    args = p.parse_args(argv)
    refuted = unknown = False
    for f in args.files:
        try:
            r = prove(f) if args.command == "prove" else validate(f)
        except (LaycertError, OSError) as e:
            print(e, file=sys.stderr)
            return 2
        print(r)
        refuted = refuted or r.refuted > 0
        unknown = unknown or r.unknown > 0
    if refuted:
        return 1
    return 3 if unknown and not args.allow_unknown else 0


if __name__ == "__main__":
    sys.exit(main())
