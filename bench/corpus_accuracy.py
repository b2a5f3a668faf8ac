"""Parse accuracy on the real-output corpus (tests/evidence/corpus): per format, the files,
the values a reader expects, those extracted right, those flagged as problems (file:line),
and those silently wrong (must be 0).

    python bench/corpus_accuracy.py            # the table (markdown)
    python bench/corpus_accuracy.py --details  # also every flagged / wrong value
"""

from __future__ import annotations

import argparse
from pathlib import Path

from meshcert.evidence.accuracy import accuracy_table, check_corpus

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "evidence" / "corpus"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--details", action="store_true")
    args = parser.parse_args()
    results = check_corpus(CORPUS)
    print("| format | files | values expected | extracted right | flagged | silently wrong |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for row in accuracy_table(results):
        print(f"| {row['format']} | {row['files']} | {row['expected']} | {row['right']} | "
              f"{row['flagged']} | {row['silently_wrong']} |")
    if args.details:
        for acc in results:
            for line in acc.wrong + acc.missing_problems:
                print(f"  {line}")
    wrong = sum(a.silently_wrong for a in results)
    missing = sum(len(a.missing_problems) for a in results)
    return 1 if wrong or missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
