"""Compatibility name: regeneration lives in :mod:`postproject.knowledge.regeneration`."""

from __future__ import annotations

from postproject.knowledge.regeneration import (
    MAX_REGENERATION_PLANS,
    DownstreamRegeneration,
    InputRepresentationMissing,
    ParametersMissing,
    RegenerationPlan,
    Reproducibility,
    ReproducibilityIssue,
    SupersededInput,
    ToolIdentityMissing,
    Unplannable,
    plan_bindings,
)

__all__ = [
    "MAX_REGENERATION_PLANS",
    "DownstreamRegeneration",
    "InputRepresentationMissing",
    "ParametersMissing",
    "RegenerationPlan",
    "Reproducibility",
    "ReproducibilityIssue",
    "SupersededInput",
    "ToolIdentityMissing",
    "Unplannable",
    "plan_bindings",
]
