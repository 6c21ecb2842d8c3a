"""A new user's domain works with no configuration: the command line in its own process."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

CLI = Path(sys.executable).with_name("retrieval")
GUIDE = "# Rotating API keys\n\nDeploy a new API key to every service, then revoke the old one.\n"


def test_a_domain_of_ones_own_is_ingested_with_no_configuration(
    tmp_path: Path, mongo_uri: str
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "keys.md").write_text(GUIDE)
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(tmp_path / "data"),
        "RETRIEVAL_MONGODB_URI": mongo_uri,
        "RETRIEVAL_MONGODB_DATABASE": f"test_{uuid.uuid4().hex[:12]}",
    }
    env.pop("RETRIEVAL_ALLOWED_DOMAINS", None)

    ingested = subprocess.run(
        [str(CLI), "ingest", "docs", "--domain", "software_docs"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )

    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert "1 document, 1 chunk: 1 created" in ingested.stdout
