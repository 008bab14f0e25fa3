"""The plugin API has two surfaces: a stable one, and an unstable one for plugins bound to
internals. Names that moved keep working from the old path for one release, with a warning."""

from __future__ import annotations

import warnings

import pytest

import scriptorium.plugin as stable
import scriptorium.plugin.unstable as unstable


def test_the_surfaces_share_no_name() -> None:
    assert set(stable.__all__).isdisjoint(unstable.__all__)
    # Every name that moved is there, and the one added since (how build helpers load plugins).
    assert set(unstable.__all__) == stable.MOVED_TO_UNSTABLE | {"load_plugins"}


@pytest.mark.parametrize("name", sorted(stable.MOVED_TO_UNSTABLE))
def test_a_moved_name_still_resolves_from_the_old_path_with_a_deprecation_warning(name) -> None:
    with pytest.warns(DeprecationWarning, match=rf"scriptorium\.plugin\.{name} moved to"):
        old = getattr(stable, name)
    assert old is getattr(unstable, name)


def test_stable_names_raise_no_warning_and_unknown_names_fail_plainly() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in stable.__all__:
            getattr(stable, name)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        stable.nothing  # noqa: B018
    with pytest.raises(AttributeError, match="unstable' has no attribute 'nothing'"):
        unstable.nothing  # noqa: B018


def test_the_stable_surface_offers_the_content_assembly() -> None:
    from scriptorium.content import assemble

    for name in ("content_outcome", "cut_for_fragment", "cut_for_ref", "placed", "StaleRef"):
        assert getattr(stable, name) is getattr(assemble, name)
