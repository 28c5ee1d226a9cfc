"""Turn user attachments (URLs, base64 data dicts) into OpenAI-style multimodal content blocks."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

__all__ = ["attachment_to_content_block", "normalize_content_blocks", "normalize_mime_type"]

_MIME_ALIASES = {
    "audio/mpeg": "audio/mp3",
    "audio/mpeg3": "audio/mp3",
    "audio/x-mp3": "audio/mp3",
    "audio/wave": "audio/wav",
    "audio/x-wav": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "image/jpg": "image/jpeg",
}
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mp3": "mp3"}
_ACCEPTED = (
    "image/* (png, jpeg, gif, webp, ...), audio/wav, audio/mp3 (audio/mpeg) or application/pdf"
)


def normalize_mime_type(mime_type: str) -> str:
    mime = mime_type.strip().lower().split(";", 1)[0].strip()
    return _MIME_ALIASES.get(mime, mime)


def _data_url_mime(url: str) -> str | None:
    if not url.startswith("data:"):
        return None
    header = url[5:].split(",", 1)[0]
    return normalize_mime_type(header.split(";", 1)[0]) if header else None


def _strip_data_url(data: str) -> str:
    return data.split(",", 1)[1] if data.startswith("data:") and "," in data else data


def _check_image_url(url: str) -> None:
    mime = _data_url_mime(url)
    if mime is None:
        path = urlparse(url).path
        guessed, _ = mimetypes.guess_type(path)
        mime = normalize_mime_type(guessed) if guessed else None
    if mime is not None and not mime.startswith("image/"):
        raise ValueError(
            f"attachment URL {url[:80]!r} looks like {mime}, but a plain URL attachment must be an "
            "image; pass other media as {'mime_type': ..., 'data': <base64>}"
        )


def attachment_to_content_block(item: Any) -> dict[str, Any]:
    """One attachment -> one OpenAI content block (a new dict)."""
    if isinstance(item, str):
        _check_image_url(item)
        return {"type": "image_url", "image_url": {"url": item}}
    if isinstance(item, Mapping):
        if "mime_type" in item and "data" in item:
            mime = normalize_mime_type(str(item["mime_type"]))
            data = item["data"]
            if not isinstance(data, str):
                raise TypeError(
                    f"attachment 'data' must be a base64 string or data: URL, got {type(data).__name__}"
                )
            if mime.startswith("image/"):
                url = (
                    data
                    if data.startswith(("data:", "http://", "https://"))
                    else (f"data:{mime};base64,{data}")
                )
                return {"type": "image_url", "image_url": {"url": url}}
            if mime == "application/pdf":
                file_data = data if data.startswith("data:") else f"data:{mime};base64,{data}"
                return {
                    "type": "file",
                    "file": {
                        "filename": item.get("name", "attachment.pdf"),
                        "file_data": file_data,
                    },
                }
            if mime in _AUDIO_FORMATS:
                return {
                    "type": "input_audio",
                    "input_audio": {"data": _strip_data_url(data), "format": _AUDIO_FORMATS[mime]},
                }
            raise ValueError(
                f"unsupported attachment mime_type {item['mime_type']!r}; use {_ACCEPTED}"
            )
        if "type" in item:
            return dict(item)
        raise ValueError(
            "an attachment dict needs 'mime_type' and 'data' (base64), or must be a ready content "
            f"block with 'type'; got keys {sorted(item)!r}"
        )
    raise ValueError(
        "attachments must be a URL string, a dict with 'mime_type' and 'data', or a list of them; "
        f"got {type(item).__name__}"
    )


def normalize_content_blocks(attachments: Any) -> list[dict[str, Any]]:
    """A single attachment or a list of them -> list of content blocks."""
    if attachments is None:
        return []
    items = attachments if isinstance(attachments, (list, tuple)) else [attachments]
    return [attachment_to_content_block(a) for a in items]
