#!/usr/bin/env python
"""Train the examples of docs/examples.md at their default sizes and draw their loss
curves into docs/images/: `python docs/make_example_plots.py [--only mlp,lstm]`.

Each example runs as `python examples/<name>.py --quiet --plot docs/images/<name>_loss.png`
(needs the `examples` extra: tqdm, matplotlib, scikit-learn); its summary line (the
accuracy reached) is printed, for the table of docs/examples.md. Takes a few minutes
(LeNet is the longest). Not part of `docs/make_docs.py`: the images change only when
an example or the compiler's numerics do.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ("mlp", "lenet", "dae", "lstm")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--only",
        default=",".join(EXAMPLES),
        help=f"comma-separated examples (of {', '.join(EXAMPLES)})",
    )
    args = p.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = sorted(set(names) - set(EXAMPLES))
    if unknown:
        p.error(f"--only: unknown example(s) {', '.join(unknown)}")
    failed = 0
    for name in names:
        plot = ROOT / "docs" / "images" / f"{name}_loss.png"
        cmd = [
            sys.executable,
            str(ROOT / "examples" / f"{name}.py"),
            "--quiet",
            "--plot",
            str(plot),
        ]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
        if done.returncode:
            failed += 1
            summary = f"FAILED: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
        print(f"{name}: {summary.replace(str(ROOT) + '/', '')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
