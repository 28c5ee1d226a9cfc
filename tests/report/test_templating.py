"""The one Jinja2 environment builder: autoescaping, strict undefined names, the number filters."""

from __future__ import annotations

import jinja2
import pytest

from openevals.report.templating import decimals, environment, number


def test_number_formats_with_the_spec_and_shows_none_as_a_dash() -> None:
    assert number(0.12345) == "0.123"
    assert number(1234.5, ".4g") == "1234"
    assert number(-0.5, "+.3f") == "-0.500"
    assert number(None) == "-"


def test_the_num_filter_formats_numbers_only() -> None:
    assert decimals(2) == "2.000"
    assert decimals(0.123456, 4) == "0.1235"
    assert decimals(None) == "-"
    assert decimals("text") == "-"


def test_every_environment_escapes_and_registers_the_filters() -> None:
    env = environment(jinja2.DictLoader({"t": "{{ x }} {{ y | num(2) }}"}))
    assert env.get_template("t").render(x="<b>", y=1.5) == "&lt;b&gt; 1.50"
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("t").render(y=1.0)
    lenient = environment(jinja2.DictLoader({"t": "[{{ x }}]"}), strict=False)
    assert lenient.get_template("t").render() == "[]"


def test_trailing_newlines_are_kept_only_on_request() -> None:
    loader = jinja2.DictLoader({"t": "a\n"})
    assert environment(loader).get_template("t").render() == "a"
    assert environment(loader, keep_trailing_newline=True).get_template("t").render() == "a\n"
