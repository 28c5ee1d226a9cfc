"""``openevals._declare``: a derived factory takes its declaration's options and binds like it."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import typing
from typing import Any

import pytest

from openevals._contract import EvaluatorInfo, info_of
from openevals._declare import async_twin, derive, evaluator_for


def create_thing_evaluator(*, size: int = 3, label: str | None = None) -> list[int]:
    """Make a thing.

    Args:
        size: how big.
    """
    return [size]


def _options(options: dict[str, Any]) -> dict[str, Any]:
    return dict(options)


create_async_thing_evaluator = async_twin(
    create_thing_evaluator, _options, returns="dict[str, Any]", note="awaits nothing"
)


def test_the_twin_has_the_declared_options_and_its_own_name_and_return() -> None:
    twin = create_async_thing_evaluator
    assert (twin.__name__, twin.__qualname__, twin.__module__) == (
        "create_async_thing_evaluator",
        "create_async_thing_evaluator",
        __name__,
    )
    assert str(inspect.signature(twin)) == (
        "(*, size: 'int' = 3, label: 'str | None' = None) -> 'dict[str, Any]'"
    )
    assert typing.get_type_hints(twin) == {
        "size": int,
        "label": str | None,
        "return": dict[str, Any],
    }
    assert twin.__doc__ is not None
    assert twin.__doc__.startswith(
        "Async twin of :func:`create_thing_evaluator` (awaits nothing).\n\nMake a thing."
    )
    assert "    size: how big." in twin.__doc__


def test_a_call_binds_like_the_declaration_and_fills_in_defaults() -> None:
    assert create_async_thing_evaluator(label="x") == {"size": 3, "label": "x"}
    with pytest.raises(TypeError):
        create_async_thing_evaluator(4)  # type: ignore[call-arg]  # keyword-only, as declared
    with pytest.raises(TypeError, match="unexpected keyword"):
        create_async_thing_evaluator(colour="red")  # type: ignore[call-arg]


def test_derive_names_any_factory_and_refuses_a_twin_of_a_non_factory() -> None:
    made = derive(create_thing_evaluator, _options, name="make", returns="dict", doc="D.")
    assert (made.__name__, made.__doc__, made(size=1)) == ("make", "D.", {"size": 1, "label": None})
    with pytest.raises(ValueError, match="create_"):
        async_twin(_options, _options, returns="X")


def create_boxed_evaluator(*, sandbox: str, size: int = 1) -> list[int]:
    return [size]


def test_a_required_option_is_required_and_options_come_in_declared_order() -> None:
    twin = async_twin(create_boxed_evaluator, _options, returns="dict[str, Any]")
    assert list(twin(size=2, sandbox="s")) == ["sandbox", "size"]
    with pytest.raises(TypeError, match="sandbox"):
        twin(size=2)  # type: ignore[call-arg]


def test_evaluator_for_makes_the_form_asked_for() -> None:
    info = EvaluatorInfo(run_name="r", feedback_keys=("k",), pure=True)

    def score(*, outputs: Any, reference_outputs: Any) -> bool:
        return bool(outputs == reference_outputs)

    sync = evaluator_for(False, score, info, paired=True)
    made = evaluator_for(True, score, info, paired=True)
    assert not inspect.iscoroutinefunction(sync) and inspect.iscoroutinefunction(made)
    assert (info_of(sync), info_of(made)) == (info, info.as_async())
    assert asyncio.run(made(outputs=1, reference_outputs=1)) == sync(outputs=1, reference_outputs=1)


def thing_batch(outputs: list[Any], reference_outputs: list[Any], *, size: int = 3) -> int:
    return size


def test_drop_leaves_out_the_leading_data_parameters() -> None:
    made = derive(
        thing_batch, _options, name="create_x", returns="dict[str, Any]", doc="D.", drop=2
    )
    assert str(inspect.signature(made)) == "(*, size: 'int' = 3) -> 'dict[str, Any]'"
    assert typing.get_type_hints(made) == {"size": int, "return": dict[str, Any]}
    assert made(size=5) == {"size": 5}
    with pytest.raises(TypeError):
        made([], [], size=5)


Colour = typing.Literal["red", "blue"]


@dataclasses.dataclass(frozen=True)
class _Data:
    items: list[Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Size:
    size: int = 3


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Painted(_Size, _Data):
    colour: Colour = "red"


def test_a_dataclass_declares_the_options_its_bases_included() -> None:
    made = derive(_Painted, _options, name="paint", returns="dict[str, Any]", doc="D.")
    assert str(inspect.signature(made)) == (
        "(items: 'list[Any]', *, size: 'int' = 3, colour: 'Colour' = 'red') -> 'dict[str, Any]'"
    )
    assert made.__annotations__ == {
        "items": "list[Any]",
        "size": "int",
        "colour": "Colour",
        "return": "dict[str, Any]",
    }
    # The annotations resolve in the declaring module (Colour is bound only here).
    assert typing.get_type_hints(made) == {
        "items": list[Any],
        "size": int,
        "colour": Colour,
        "return": dict[str, Any],
    }
    assert made([1], colour="blue") == {"items": [1], "size": 3, "colour": "blue"}
    with pytest.raises(TypeError, match="unexpected keyword"):
        made([1], shade="dark")  # type: ignore[call-arg]


def test_a_wrong_call_names_the_derived_function_as_a_plain_function_would() -> None:
    made = derive(create_thing_evaluator, _options, name="make", returns="dict", doc="D.")
    with pytest.raises(TypeError, match=r"^make\(\) got an unexpected keyword argument 'colour'$"):
        made(colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^make\(\) too many positional arguments$"):
        made(4)  # type: ignore[call-arg]
