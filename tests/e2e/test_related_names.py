"""ExpandRelated between doc sections and the code they name, through a real daemon.

Issue #41: a section about hooks came back with its sibling sections and code that merely
shared words, while the definitions it names were missing from the top results.
"""

from __future__ import annotations

import json

import pytest

from tests.support.daemon import cli, running
from tests.support.trees import write_tree

PLUGINS_MD = """\
# Writing plugins

## Hooks

Everything a plugin may import is in one module, `toolkit.plugin`. Implement the hooks of
`hookspecs.py`; each registration hook receives a `register` callback. Declare keys with
`toolkit.plugin.Key(name, type, default,
help)` (types: `string`, `bool`).

### `register_kinds(register)`

Register source kinds: each kind gets a file list, a block list and a markdown cell reader.

## Document formats

Each file kind becomes blocks: a markdown file by its headings, a notebook by its cells, a
plain file as one block. Every block keeps its file, its kind and its cells.
"""

FILES = {
    "docs/plugins.md": PLUGINS_MD,
    "toolkit/__init__.py": "",
    "toolkit/hookspecs.py": (
        '"""The hooks."""\n\n\ndef register_kinds(register):\n'
        '    """Register source kinds."""\n\n\ndef register_modes(register):\n'
        '    """Register modes."""\n'
    ),
    "toolkit/plugin.py": '"""What a plugin imports."""\n\nfrom toolkit.keys import Key\n',
    "toolkit/keys.py": "class Key:\n    def __init__(self, name, type, default, help):\n"
    "        self.name = name\n",
    # Every built-in plugin implements the hook: the name alone does not say which is meant.
    **{
        f"extras/{name}/__init__.py": (
            f"def register_kinds(register):\n    register('{name}', object)\n"
        )
        for name in ("alpha", "beta", "gamma", "delta")
    },
    # Shares the section's words, names none of its code.
    "extras/notebook/cells.py": (
        "def markdown_cell(cell, block, kind, file):\n"
        "    '''Each markdown cell of a notebook file becomes a block of its kind.'''\n"
        "    return [cell, block, kind, file]\n"
    ),
}


@pytest.fixture(scope="module")
def toolkit_daemon(tmp_path_factory: pytest.TempPathFactory):
    root = write_tree(tmp_path_factory.mktemp("toolkit") / "repo", FILES)
    with running([str(root)], root.parent / "state") as daemon:
        yield daemon


def related(daemon, location: str) -> list[dict]:
    done = cli(daemon, "--format", "json", "related", location, "--top-k", "8")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["related"]


def reasons(hit: dict) -> set[str]:
    return {reason["name"] for reason in hit["reasons"]}


def test_a_section_leads_first_to_the_definitions_and_modules_it_names(toolkit_daemon):
    found = related(toolkit_daemon, "docs/plugins#hooks")
    top = [hit["location"] for hit in found[:3]]
    # The module and the file it names, and the hook's declaration (not the four plugins
    # implementing it, which lie away from the code the section names)...
    assert "toolkit/plugin.py" in top and "toolkit/hookspecs.py" in top, top
    assert any(loc.startswith("toolkit/hookspecs.py#L4") for loc in top), top
    assert all("names" in reasons(hit) for hit in found[:3])
    locations = [hit["location"] for hit in found]
    # ...then the class of a call whose code span wraps a line.
    assert any(loc.startswith("toolkit/keys.py#L1") for loc in locations[:5]), locations
    assert not any(loc.startswith("extras/alpha") for loc in locations), locations
    # Word overlap still counts, after what the section names.
    notebook = [i for i, loc in enumerate(locations) if loc.startswith("extras/notebook")]
    assert not notebook or notebook[0] >= 3, locations


def test_a_definition_leads_to_the_sections_that_name_it(toolkit_daemon):
    found = related(toolkit_daemon, "toolkit/hookspecs.py#register_kinds")
    first = found[0]
    assert first["location"].startswith("docs/plugins#"), [h["location"] for h in found]
    assert "named-by" in reasons(first)


def test_fastapi_sections_lead_to_the_library_definitions(fastapi_daemon):
    found = related(fastapi_daemon, "tutorial/encoder#using-the-jsonable-encoder")
    assert found[0]["location"].startswith("fastapi/encoders.py"), found[0]
    back = related(fastapi_daemon, "fastapi/encoders.py#jsonable_encoder")
    top = [hit["location"].partition("#")[0] for hit in back[:3]]
    assert "tutorial/encoder" in top, top
