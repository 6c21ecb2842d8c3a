"""Regenerate the Python code of the contract: ``python libs/retrieval-proto/generate.py``.

Writes ``*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py`` beside each ``.proto`` under ``src/``
(or under ``--out``). The proto root is ``src/``, so generated modules import each other as
``retrieval_proto.retrieval.v1...``.
"""

from __future__ import annotations

import argparse
import sys
from importlib.resources import files
from pathlib import Path

from grpc_tools import protoc

SOURCE_ROOT = Path(__file__).resolve().parent / "src"


def generate(out: Path) -> None:
    well_known = files("grpc_tools") / "_proto"
    for proto in sorted(SOURCE_ROOT.rglob("*.proto")):
        status = protoc.main(
            [
                "protoc",
                f"--proto_path={SOURCE_ROOT}",
                f"--proto_path={well_known}",
                f"--python_out={out}",
                f"--pyi_out={out}",
                f"--grpc_python_out={out}",
                str(proto),
            ]
        )
        if status != 0:
            sys.exit(f"protoc failed on {proto.relative_to(SOURCE_ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SOURCE_ROOT, help="Output root (default src/).")
    generate(parser.parse_args().out)


if __name__ == "__main__":
    main()
