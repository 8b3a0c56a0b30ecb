"""The one verdict type: a rule broken by one config, as check, explain, coverage and the CLI report it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """One broken rule, or one value outside the modelled domain (family `model`), on one concrete config.

    `message` carries the config's own numbers; `fields` are the fields the rule reads (the only ones its `fix` may
    change); `enabled` says whether the rule's family is switched on, i.e. whether the verdict rejects the config or
    only tells what a switched-off family would say.
    """

    rule: str
    family: str
    message: str
    fields: tuple[str, ...]
    source: str
    rationale: str = ""
    enabled: bool = True
    fix: dict[str, object] | None = None  # the smallest change of `fields` that satisfies the rule, when computed

    @property
    def id(self) -> str:
        return self.rule

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"
