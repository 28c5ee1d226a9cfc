"""Attachments (URLs, ``{"mime_type", "data"}`` dicts, ready blocks) -> OpenAI content blocks."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openevals._attachments import (
    attachment_to_content_block,
    normalize_content_blocks,
    normalize_mime_type,
    to_standard_block,
    to_standard_content,
)
from openevals.utils import _attachment_to_content_block, _normalize_content_blocks

B64 = "iVBORw0KGgo="


# --------------------------------------------------------------------------- URLs


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/cat.png",
        "https://example.com/photo.JPG",
        "https://example.com/render?id=3",
        "http://example.com/no-extension",
        f"data:image/png;base64,{B64}",
        f"data:image/webp;base64,{B64}",
    ],
)
def test_image_url_string(url: str) -> None:
    assert attachment_to_content_block(url) == {"type": "image_url", "image_url": {"url": url}}


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://x/y.pdf", "application/pdf"),
        ("https://x/song.mp3?download=1", "audio/mp3"),
        ("https://x/notes.txt", "text/plain"),
        (f"data:audio/wav;base64,{B64}", "audio/wav"),
        (f"data:application/pdf;base64,{B64}", "application/pdf"),
    ],
)
def test_non_image_url_string_is_rejected(url: str, kind: str) -> None:
    with pytest.raises(ValueError, match=rf"looks like {kind}.*must be an image"):
        attachment_to_content_block(url)


# --------------------------------------------------------------------------- images


@pytest.mark.parametrize(
    "mime", ["image/png", "image/jpeg", "image/gif", "image/webp", " Image/PNG "]
)
def test_image_base64_becomes_data_url(mime: str) -> None:
    block = attachment_to_content_block({"mime_type": mime, "data": B64})
    expected_mime = mime.strip().lower()
    assert block == {
        "type": "image_url",
        "image_url": {"url": f"data:{expected_mime};base64,{B64}"},
    }


@pytest.mark.parametrize(
    "data", [f"data:image/png;base64,{B64}", "https://x/y.png", "http://x/y.png"]
)
def test_image_data_url_or_link_is_kept(data: str) -> None:
    assert attachment_to_content_block({"mime_type": "image/png", "data": data}) == {
        "type": "image_url",
        "image_url": {"url": data},
    }


def test_image_jpg_alias() -> None:
    block = attachment_to_content_block({"mime_type": "image/jpg", "data": B64})
    assert block["image_url"]["url"] == f"data:image/jpeg;base64,{B64}"


# --------------------------------------------------------------------------- PDF


def test_pdf_default_and_custom_filename() -> None:
    assert attachment_to_content_block({"mime_type": "application/pdf", "data": B64}) == {
        "type": "file",
        "file": {"filename": "attachment.pdf", "file_data": f"data:application/pdf;base64,{B64}"},
    }
    data_url = f"data:application/pdf;base64,{B64}"
    block = attachment_to_content_block(
        {"mime_type": "APPLICATION/PDF", "data": data_url, "name": "report.pdf"}
    )
    assert block == {"type": "file", "file": {"filename": "report.pdf", "file_data": data_url}}


# --------------------------------------------------------------------------- audio


@pytest.mark.parametrize(
    ("mime", "fmt"),
    [
        ("audio/wav", "wav"),
        ("audio/wave", "wav"),
        ("audio/x-wav", "wav"),
        ("audio/vnd.wave", "wav"),
        ("audio/mp3", "mp3"),
        ("audio/mpeg", "mp3"),
        ("AUDIO/MPEG", "mp3"),
        ("audio/x-mp3", "mp3"),
    ],
)
def test_audio_aliases(mime: str, fmt: str) -> None:
    assert attachment_to_content_block({"mime_type": mime, "data": B64}) == {
        "type": "input_audio",
        "input_audio": {"data": B64, "format": fmt},
    }


def test_audio_data_url_prefix_is_stripped() -> None:
    block = attachment_to_content_block(
        {"mime_type": "audio/mpeg", "data": f"data:audio/mpeg;base64,{B64}"}
    )
    assert block == {"type": "input_audio", "input_audio": {"data": B64, "format": "mp3"}}


@pytest.mark.parametrize(
    "mime", ["audio/ogg", "audio/flac", "text/plain", "video/mp4", "application/json"]
)
def test_unsupported_mime_is_value_error_listing_accepted_kinds(mime: str) -> None:
    with pytest.raises(
        ValueError, match=rf"^Unsupported attachment MIME type '{mime}' in attachments.*image/\*"
    ):
        attachment_to_content_block({"mime_type": mime, "data": B64})


def test_normalize_mime_type() -> None:
    assert normalize_mime_type(" Audio/MPEG ") == "audio/mp3"
    assert normalize_mime_type("audio/x-wav") == "audio/wav"
    assert normalize_mime_type("image/png; charset=binary") == "image/png"
    assert normalize_mime_type("image/webp") == "image/webp"


# --------------------------------------------------------------------------- ready blocks & errors


def test_ready_block_is_returned_as_a_copy() -> None:
    block = {"type": "text", "text": "hello"}
    out = attachment_to_content_block(block)
    assert out == block
    assert out is not block


@pytest.mark.parametrize(
    ("bad", "exc", "pattern"),
    [
        ({"url": "https://x/y.png"}, ValueError, r"'mime_type' and 'data'.*\['url'\]"),
        ({"mime_type": "image/png"}, ValueError, r"\['mime_type'\]"),
        ({"mime_type": "image/png", "data": b"bytes"}, TypeError, "got bytes"),
        ({"mime_type": "image/png", "data": None}, TypeError, "got NoneType"),
        (5, ValueError, "^Unsupported attachment type int in attachments"),
        (None, ValueError, "^Unsupported attachment type NoneType in attachments"),
        (b"https://x/y.png", ValueError, "^Unsupported attachment type bytes in attachments"),
    ],
)
def test_bad_attachments(bad: Any, exc: type[Exception], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        attachment_to_content_block(bad)


# --------------------------------------------------------------------------- lists


def test_normalize_content_blocks() -> None:
    assert normalize_content_blocks(None) == []
    assert normalize_content_blocks("https://x/a.png") == [
        {"type": "image_url", "image_url": {"url": "https://x/a.png"}}
    ]
    items = [
        "https://x/a.png",
        {"mime_type": "audio/wav", "data": B64},
        {"mime_type": "application/pdf", "data": B64, "name": "r.pdf"},
        {"type": "text", "text": "caption"},
    ]
    snapshot = copy.deepcopy(items)
    blocks = normalize_content_blocks(items)
    assert [b["type"] for b in blocks] == ["image_url", "input_audio", "file", "text"]
    assert normalize_content_blocks(tuple(items)) == blocks
    assert items == snapshot


def test_one_bad_item_fails_the_whole_list() -> None:
    with pytest.raises(ValueError, match=r"y\.pdf"):
        normalize_content_blocks(["https://x/a.png", "https://x/y.pdf"])


def test_public_private_aliases() -> None:
    assert _attachment_to_content_block is attachment_to_content_block
    assert _normalize_content_blocks is normalize_content_blocks


@given(
    st.sampled_from(["image/png", "audio/wav", "audio/mpeg", "application/pdf"]),
    st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", min_size=1
    ),
    st.booleans(),
)
def test_payload_survives_round_trip(mime: str, payload: str, as_data_url: bool) -> None:
    data = f"data:{mime};base64,{payload}" if as_data_url else payload
    item = {"mime_type": mime, "data": data}
    snapshot = dict(item)
    block = attachment_to_content_block(item)
    assert item == snapshot
    if block["type"] == "image_url":
        assert block["image_url"]["url"].endswith(payload)
    elif block["type"] == "file":
        assert block["file"]["file_data"] == f"data:{mime};base64,{payload}"
    else:
        assert block["input_audio"]["data"] == payload


# --------------------------------------------------------------------------- LangChain standard blocks


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"type": "text", "text": "hi"}, {"type": "text", "text": "hi"}),
        (
            {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lG"}},
            {"type": "image", "base64": "R0lG", "mime_type": "image/gif"},
        ),
        (
            {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "high"}},
            {"type": "image", "url": "https://x/y.png", "extras": {"detail": "high"}},
        ),
        (
            {"type": "image_url", "image_url": "https://x/y.png"},
            {"type": "image", "url": "https://x/y.png"},
        ),
        (
            {"type": "file", "file": {"file_data": "JVBE"}},
            {"type": "file", "base64": "JVBE", "mime_type": "application/pdf"},
        ),
        ({"type": "file", "file": {"file_id": "file-1"}}, {"type": "file", "file_id": "file-1"}),
        (
            {"type": "input_audio", "input_audio": {"data": "AAA", "format": "mp3"}},
            {"type": "audio", "base64": "AAA", "mime_type": "audio/mp3"},
        ),
        ({"type": "image", "url": "https://x"}, {"type": "image", "url": "https://x"}),
        ({"type": "image_url"}, {"type": "image_url"}),
    ],
)
def test_to_standard_block(block: dict[str, Any], expected: dict[str, Any]) -> None:
    snapshot = copy.deepcopy(block)
    assert to_standard_block(block) == expected
    assert block == snapshot


def test_to_standard_content_keeps_non_dict_parts() -> None:
    assert to_standard_content(["plain", {"type": "text", "text": "t"}]) == [
        "plain",
        {"type": "text", "text": "t"},
    ]
