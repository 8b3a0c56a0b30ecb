"""Checking one concrete config against the rules in plain Python, without the solver.

This is the independent oracle of the tests and the engine of `explain`: for every rule it evaluates `when` and
`require` directly on the config's values and renders the rule's message with the real numbers.
"""

from __future__ import annotations

from typing import Callable, Collection, Iterable, Iterator, Mapping, SupportsInt, cast

from ..memo import memo
from . import expr as E
from .data import Rule, message_parts
from ..errors import CkspaceError, ExprError, KernelNameError
from .model import Model, kind_of_variant
from .names import parse_name
from .verdict import Verdict


def domain_verdicts(model: Model, config: Mapping[str, object]) -> list[Verdict]:
    """Fields missing or outside their modelled domain, as verdicts of the built-in `model` family (always on)."""
    kind = kind_of_variant(str(config.get("variant")))
    out = []
    for f in model.fields(kind):
        if f.derived and f.name not in config:
            continue
        value = config.get(f.name)
        if value not in f.values or (f.type == "bool") != isinstance(value, bool):
            out.append(Verdict(
                rule=f"model.domain-{f.name}", family="model",
                message=f"{f.name} {show_value(value)} is outside the modelled space: {_show_domain(f.values)}",
                fields=(f.name,), source=f"fields.toml: field.{f.name} ({f.doc})" if f.doc else f"fields.toml: field.{f.name}",
                rationale="every field takes its values from the open domain in fields.toml"))
    return out


def domain_violations(model: Model, config: Mapping[str, object]) -> list[str]:
    """The messages of domain_verdicts (fields missing or outside their modelled domain)."""
    return [v.message for v in domain_verdicts(model, config)]


show_value = E.show_value  # a value as the rule language writes it (true/false, 'text', numbers)


def _show_domain(values: tuple) -> str:
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values) and len(values) > 6:
        step = values[1] - values[0]
        if all(b - a == step for a, b in zip(values, values[1:])):
            return f"{values[0]}..{values[-1]} in steps of {step}"
    return ", ".join(str(v) for v in values)


def breaks(rule: Rule, config: Mapping[str, object], model: Model) -> bool:
    """True when the config breaks the rule: `when` holds and `require` does not."""
    when, require = _compiled(rule, model)
    try:
        return bool(when(config)) and not require(config)
    except KeyError:
        return False  # the rule reads a field this config does not have (the other kernel family)


# (model, rule) -> closures (rules.expr.compile_node)
_COMPILED: dict[tuple[int, str], tuple[object, Rule, tuple]] = memo("rules.check.compiled", {})


def closures(rule: Rule, model: Model) -> tuple[Callable[..., object], Callable[..., object]]:
    """The rule's `when` and `require` as functions of a config, with evaluate's exact semantics."""
    return _compiled(rule, model)


def _compiled(rule: Rule, model: Model) -> tuple:
    """The rule's `when` and `require` as closures with evaluate's exact semantics, once per model (its arch's data
    references are resolved in them): checking thousands of names, the tree walk was most of the time."""
    key = (id(model), rule.id)
    hit = _COMPILED.get(key)
    if hit is not None and hit[0] is model and hit[1] is rule:
        return hit[2]
    from .expr import Unsupported, compile_node

    # expr.Fn, or a lambda holding its node as a default argument (which a Fn context cannot type)
    fns: tuple[Callable[..., object], Callable[..., object]]
    try:
        fns = (compile_node(rule.when, model.resolve, exact=True), compile_node(rule.require, model.resolve, exact=True))
    except (Unsupported, KeyError, ExprError, TypeError):  # a reference the data cannot resolve: evaluate decides
        fns = (lambda c, n=rule.when: E.evaluate(n, c, model.resolve),
               lambda c, n=rule.require: E.evaluate(n, c, model.resolve))
    if len(_COMPILED) > 16384:
        _COMPILED.clear()
    _COMPILED[key] = (model, rule, fns)
    return fns


def verdict(rule: Rule, config: Mapping[str, object], model: Model) -> Verdict:
    """The verdict of a rule the config breaks, with the config's numbers in its message."""
    try:
        message = render(rule, config, model)
    except (CkspaceError, TypeError, ValueError):
        message = rule.message  # a value the message cannot be rendered with: the template as written
    return Verdict(rule=rule.id, family=rule.family, message=message, fields=tuple(sorted(rule.fields)),
                   source=f"{rule.source} ({rule.file})", rationale=rule.rationale,
                   enabled=rule.family in model.families)


def violations(model: Model, config: Mapping[str, object], all_families: bool = False) -> list[Verdict]:
    """Every rule the config breaks, in rule order; optional (switched-off) families too when `all_families`."""
    kind = kind_of_variant(str(config.get("variant")))
    rules = model.all_rules_for(kind) if all_families else model.rules_for(kind)
    return [verdict(r, config, model) for r in rules if breaks(r, config, model)]


def broken_rules(model: Model, config: Mapping[str, object],
                 families: Collection[str] | None = None) -> Iterator[Rule]:
    """The rules the config breaks (rule_verdicts without the messages), in rule order, as they are found; only
    those of `families` when given."""
    kind = kind_of_variant(str(config.get("variant")))
    for rule in model.all_rules_for(kind):
        if families is not None and rule.family not in families:
            continue
        try:
            if breaks(rule, config, model):
                yield rule
        except (ExprError, TypeError, ValueError):
            continue  # a value the rule cannot read (outside the domain, reported as a `model` verdict)


def rule_verdicts(model: Model, config: Mapping[str, object]) -> list[Verdict]:
    """Every rule of every family the config breaks, each evaluated on its own, in the data's family order."""
    kind = kind_of_variant(str(config.get("variant")))
    found: list[Verdict] = []
    for rule in model.all_rules_for(kind):
        try:
            broken = breaks(rule, config, model)
        except (ExprError, TypeError, ValueError):
            continue  # a value the rule cannot read (outside the domain, reported as a `model` verdict)
        if broken:
            found.append(verdict(rule, config, model))
    order = {f: i for i, f in enumerate(model.data.families)}
    return sorted(found, key=lambda v: order.get(v.family, len(order)))  # stable: rule order within a family


def first_reason(model: Model, name: str) -> str:
    """Why a name is not in the model's set, in one line: malformed, outside the modelled space, or the first rule
    it breaks (coverage reports this for every listed name that is not in the set)."""
    try:
        config = parse_name(name)
    except KernelNameError as exc:
        return f"malformed name: {exc}"
    problems = domain_verdicts(model, config)
    if problems:
        return problems[0].message
    try:
        broken = violations(model, config)
    except (CkspaceError, KeyError, TypeError, ValueError):  # a kernel family this arch does not model, etc.
        broken = []
    if broken:
        more = f" (and {len(broken) - 1} more rules)" if len(broken) > 1 else ""
        return f"breaks {broken[0].rule}: {broken[0].message}{more}"
    return "not in full"


def is_valid(model: Model, config: Mapping[str, object]) -> bool:
    kind = kind_of_variant(str(config.get("variant")))
    if domain_violations(model, config):
        return False
    return not any(breaks(r, config, model) for r in model.rules_for(kind))


def render(rule: Rule, config: Mapping[str, object], model: Model) -> str:
    """The rule's message with the config's numbers filled in."""
    out = []
    for text, expr_text, fmt in message_parts(rule.message):
        out.append(text)
        if not expr_text:
            continue
        if expr_text == "expected":
            value = _derived_expected(rule, config, model)
        elif expr_text == "allowed":
            value = ", ".join(allowed_values(rule, config, model)) or "none"
        else:
            node = _message_node(model, expr_text)
            try:
                value = E.evaluate(node, config, model.resolve)
            except (KeyError, ExprError):
                value = "?"
        out.append(_format(value, fmt))
    return "".join(out)


# (id of the data, text) -> (data, parsed)
_MESSAGE_NODES: dict[tuple[int, str], tuple[object, E.Node]] = memo("rules.check.message_nodes", {})


def _message_node(model: Model, text: str) -> E.Node:
    """A message's `{expression}` parsed and expanded once per data set: a batch renders thousands of messages."""
    key = (id(model.data), text)
    hit = _MESSAGE_NODES.get(key)
    if hit is not None and hit[0] is model.data:
        return hit[1]
    node = model.data.macros.expand(E.parse(text, _names(model), model.data.namespaces, "message"))
    if len(_MESSAGE_NODES) > 4096:
        _MESSAGE_NODES.clear()
    _MESSAGE_NODES[key] = (model.data, node)
    return node


def _names(model: Model) -> dict[str, object]:
    return {**model.data.fields, **dict.fromkeys(model.data.derives)}


def _derived_expected(rule: Rule, config: Mapping[str, object], model: Model) -> object:
    """The right side of `field == formula` (or of `field in spellings`, its values joined with 'or')."""
    assert isinstance(rule.require, (E.Cmp, E.In))
    value = E.evaluate(rule.require.right, config, model.resolve)
    if isinstance(rule.require, E.In) and isinstance(value, tuple):
        return " or ".join(str(v) for v in value)
    return value


def _format(value: object, fmt: str) -> str:
    if fmt == "d":
        return str(int(cast(SupportsInt, value)))  # what int takes (any other value raises: verdict shows the template)
    if fmt == "x":
        items = list(cast(Iterable[object], getattr(value, "rows", value)))  # a relation's rows, or a tuple
        return " ".join("x".join(str(v) for v in item) if isinstance(item, tuple) else str(item) for item in items) or "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def allowed_values(rule: Rule, config: Mapping[str, object], model: Model) -> list[str]:
    """For a membership rule: the values of its `allowed` fields that would satisfy it, the rest of the config fixed.

    Evaluated by trying every domain value of those fields (a small product), with the plain check.
    """
    if not rule.allowed:
        return []
    import itertools

    domains = [model.data.fields[f].values for f in rule.allowed]
    size = 1
    for d in domains:
        size *= len(d)
    if size > 20000:
        return []
    found = []
    for combo in itertools.product(*domains):
        trial = {**config, **dict(zip(rule.allowed, combo))}
        if not breaks(rule, trial, model):
            found.append("/".join(str(v) for v in combo) if len(combo) > 1 else str(combo[0]))
    return found
