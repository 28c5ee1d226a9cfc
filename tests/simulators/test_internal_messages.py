"""0.2.2's private `_is_internal_message`, which the public repository's current tests import."""

from __future__ import annotations

import pytest

from openevals.simulators.prebuilts import _is_internal_message


@pytest.mark.parametrize(
    ("message", "internal"),
    [
        ({"role": "user", "content": "hi"}, False),
        ({"role": "assistant", "content": "hello"}, False),
        ({"role": "assistant", "content": "", "tool_calls": [{"id": "1"}]}, True),
        ({"role": "tool", "content": "42", "tool_call_id": "1"}, True),
        ({"role": "system", "content": "be kind"}, True),
    ],
)
def test_internal_messages_are_hidden_from_the_simulated_user(
    message: dict, internal: bool
) -> None:
    assert _is_internal_message(message) is internal
