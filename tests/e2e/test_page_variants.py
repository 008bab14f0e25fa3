"""Variants of one page through a real daemon: a guide kept once per framework (sibling
folders holding the same pages) is shown once, the variant the query names stays, and pages
that only share a file name in folders holding different pages are not variants. Code too:
the same definition in each framework's port of a library is shown once, and modules that
share file names but define different things are all shown."""

from __future__ import annotations

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import serving_files

GUIDES = {
    "query-retries": "# Query Retries\n\nA failed query is retried three times before it "
    "fails: set retry to another number of retries, or to false.\n",
    "caching": "# Caching\n\nInactive query results stay cached for five minutes, then they "
    "are garbage collected.\n",
    "polling": "# Polling\n\nrefetchInterval refetches a query every few seconds.\n",
    "mutations": "# Mutations\n\nA mutation creates, updates or deletes data on the server.\n",
}
FRAMEWORKS = ("react", "vue", "solid")
FILES = {
    f"docs/framework/{framework}/guides/{name}.md": text.replace("# ", f"# {framework} ", 1)
    for framework in FRAMEWORKS
    for name, text in GUIDES.items()
}
FILES |= {
    # Two pages named alike in folders holding different pages: not variants.
    "docs/tutorial/overview.md": "# Overview\n\nThe tutorial retries a failed query step by "
    "step.\n",
    "docs/how-to/overview.md": "# Overview\n\nThe how-to guides show how to retry a failed "
    "query.\n",
    "docs/tutorial/first-steps.md": "# First steps\n\nInstall the library.\n",
    "docs/how-to/deploy.md": "# Deploy\n\nShip the application.\n",
}

# One hook ported to two frameworks: each package holds the same files and defines the same
# names in them.
PORT = {
    "useRetry.ts": "export function useRetry(query: Query, retries = 3) {\n"
    "  // Retry a failed query {n} times before it fails.\n"
    "{body}"
    "  return retryQuery(query, retries)\n}\n",
    "useCache.ts": "export function useCache(key: string) {\n  return cacheFor(key)\n}\n",
    "index.ts": "export { useRetry } from './useRetry'\nexport { useCache } from './useCache'\n",
}
# Each port is its framework's own code: too different for a near-duplicate.
PORT_BODIES = {
    "solid": "  const [state, setState] = createSignal(initialState)\n"
    "  createEffect(() => setState(observer.getOptimisticResult(defaultedOptions)))\n"
    "  onCleanup(() => unsubscribe())\n",
    "preact": "  const client = useQueryClient(queryClient)\n"
    "  const [observer] = useState(() => new Observer(client, defaultedOptions))\n"
    "  useEffect(() => observer.setOptions(defaultedOptions), [defaultedOptions])\n",
}
FILES |= {
    f"packages/{framework}-port/src/{name}": text.replace("{body}", body)
    for framework, body in PORT_BODIES.items()
    for name, text in PORT.items()
}
# Two modules of one package holding the same file names, defining different things.
FILES |= {
    f"lib/{module}/{name}": f"def {module}_{name[:-3]}():\n    return None\n"
    for module in ("openapi", "dependencies")
    for name in ("__init__.py", "models.py")
}
FILES |= {
    "lib/openapi/utils.py": "def build_schema(route):\n"
    '    """Retry a failed schema build for a route."""\n    return route\n',
    "lib/dependencies/utils.py": "def solve_dependencies(route):\n"
    '    """Retry a failed dependency for a route."""\n    return route\n',
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    with serving_files(tmp_path_factory.mktemp("variants"), FILES) as served:
        yield served


def _search(daemon, query: str, corpus: int = pb.CORPUS_DOCS) -> pb.SearchResponse:
    request = pb.SearchRequest(query=query, top_k=5, explain=True, kinds=[corpus])
    return daemon.stub.Search(request, timeout=30)


def _pages(response: pb.SearchResponse) -> list[str]:
    """The pages of the results, as their locations name them (no ``.md``)."""
    return [r.location.split("#")[0] for r in response.results]


def _drops(response: pb.SearchResponse) -> dict[str, str]:
    return {
        drop.location.split("#")[0]: drop.why for stage in response.stages for drop in stage.drops
    }


def _shown_once(response: pb.SearchResponse, suffix: str) -> tuple[str, dict[str, str]]:
    """The one result whose page ends with ``suffix``, and why each other one was held back."""
    found = [p for p in _pages(response) if p.endswith(suffix)]
    assert len(found) == 1, _pages(response)
    held = {page: why for page, why in _drops(response).items() if page.endswith(suffix)}
    return found[0], held


def test_a_guide_kept_per_framework_is_shown_once(daemon):
    response = _search(daemon, "how many times is a failed query retried")
    shown, held = _shown_once(response, "/query-retries")
    assert len(held) == 2, _drops(response)
    for page, why in held.items():
        framework = page.split("/")[2]
        assert why.startswith(f"a variant ({framework}) of {shown}"), why
        assert why.endswith(", shown instead"), why


def test_the_variant_the_query_names_comes_first(daemon):
    response = _search(daemon, "vue: how many times is a failed query retried")
    retries = [p for p in _pages(response) if p.endswith("/query-retries")]
    assert retries == ["docs/framework/vue/guides/query-retries"]


def test_pages_sharing_a_name_in_folders_of_different_pages_are_not_variants(daemon):
    pages = _pages(_search(daemon, "overview retry a failed query step"))
    assert {"docs/tutorial/overview", "docs/how-to/overview"} <= set(pages)


def test_a_definition_ported_to_each_framework_is_shown_once(daemon):
    response = _search(daemon, "useRetry retry a failed query", pb.CORPUS_CODE)
    shown, held = _shown_once(response, "/useRetry.ts")
    assert len(held) == 1, _drops(response)
    ((page, why),) = held.items()
    assert page != shown
    assert why.startswith(f"a variant ({page.split('/')[1]}) of {shown}"), why


def test_the_port_the_query_names_is_shown_too(daemon):
    pages = _pages(_search(daemon, "preact useRetry retry a failed query", pb.CORPUS_CODE))
    assert "packages/preact-port/src/useRetry.ts" in pages, pages


def test_modules_sharing_file_names_show_what_each_defines(daemon):
    pages = _pages(_search(daemon, "retry a failed route", pb.CORPUS_CODE))
    assert {"lib/openapi/utils.py", "lib/dependencies/utils.py"} <= set(pages), pages
