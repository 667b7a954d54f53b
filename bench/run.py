"""`make bench`: run every benchmark script in bench/ in turn; each prints its figures.

Each script starts its own platform (local stand-ins), so the figures of one do not
disturb the next. Pass names to run a subset: `python bench/run.py gateway posts`.
"""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    scripts = sorted(HERE.glob("*_bench.py"))
    if names:
        scripts = [s for s in scripts if s.name.removesuffix("_bench.py") in names]
    failed = 0
    for script in scripts:
        print(f"\n===== {script.name} =====", flush=True)
        failed += subprocess.run([sys.executable, str(script)]).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
