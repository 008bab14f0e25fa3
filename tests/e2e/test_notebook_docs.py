"""A real Jupyter notebook (xarray's) in a docs tree through a daemon: cells, headings, edits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.calls import content
from tests.support.daemon import running
from tests.support.waiting import wait_for

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/notebooks/xarray"
NOTEBOOK = "examples/area_weighted_temperature.ipynb"


def search(stub, query: str) -> list[pb.SearchResult]:
    reply = stub.Search(pb.SearchRequest(query=query, kinds=[pb.CORPUS_DOCS]), timeout=30)
    return list(reply.results)


def test_notebook_cells_are_found_read_and_kept_current(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURE, docs / "examples")
    (docs / "index.md").write_text("# Examples\n\nWorked examples.\n", "utf-8")
    with running([str(docs), "--watch-interval", "0.2"], tmp_path / "state") as daemon:
        stub = daemon.stub
        hits = search(stub, "np.cos deg2rad weights")
        assert hits[0].location == f"{NOTEBOOK}#cell-9"
        assert hits[0].language == "python"
        heading = search(stub, "rectangular grid cosine proportional to the cell area")
        assert heading[0].location == f"{NOTEBOOK}#creating-weights"

        cell = content(stub, f"{NOTEBOOK}#cell-9")
        assert cell.resolution.reason == "resolved"
        assert cell.content.splitlines() == [
            "```python",
            "weights = np.cos(np.deg2rad(air.lat))",
            'weights.name = "weights"',
            "weights",
            "```",
        ]
        assert list(cell.section_path)[1] == "Creating weights"
        # The Markdown cell's number names its heading's section, which holds its cells.
        section = content(stub, f"{NOTEBOOK}#cell-8")
        assert section.resolution.resolved_location == f"{NOTEBOOK}#creating-weights"
        assert section.content.splitlines()[0] == "## Creating weights"
        assert "weights = np.cos" in section.content
        # The whole notebook reads as Markdown, without its JSON.
        page = content(stub, NOTEBOOK)
        assert '"cell_type"' not in page.content and "# Compare weighted" in page.content

        path = docs / NOTEBOOK
        data = json.loads(path.read_text("utf-8"))
        data["cells"].append(
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": ["platypus_mean = air.mean()\n"],
            }
        )
        path.write_text(json.dumps(data), "utf-8")
        assert wait_for(
            lambda: (
                [h.location for h in search(stub, "platypus_mean")][:1] == [f"{NOTEBOOK}#cell-15"]
            )
        )
