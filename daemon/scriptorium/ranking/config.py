"""The ``[ranking]`` configuration table, read into ``RankingSettings``."""

from __future__ import annotations

import dataclasses

from scriptorium.index.searcher import FieldWeights
from scriptorium.ranking.pipeline import RANKING_KEYS, RankingSettings
from scriptorium.settings.schema import check_table


def ranking_settings(raw: dict) -> RankingSettings:
    """Ranking levers from the ``[ranking]`` configuration table (used by measurement runs)."""
    if not raw:
        return RankingSettings()
    check_table(raw, RANKING_KEYS, "[ranking]")
    fields = dict(raw)
    defaults = FieldWeights()
    weights = FieldWeights(
        body=float(fields.pop("body_weight", defaults.body)),
        heading=float(fields.pop("heading_weight", defaults.heading)),
        path=float(fields.pop("path_weight", defaults.path)),
    )
    classes = fields.pop("class_weights", None)
    settings = RankingSettings(weights=weights, **fields)
    if classes:
        merged = {**settings.class_weights, **{k: float(v) for k, v in classes.items()}}
        settings = dataclasses.replace(settings, class_weights=merged)
    return settings
