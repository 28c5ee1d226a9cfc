"""Turn user attachments (URLs, base64 data dicts) into multimodal content blocks.

Attachments become OpenAI-format blocks (``image_url``, ``file``, ``input_audio``), the form OpenAI
clients and ``ChatOpenAI`` take; :func:`to_standard_content` rewrites them into LangChain's standard
blocks (``{"type": "image", "base64": ..., "mime_type": ...}``) for every other LangChain model.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from openevals._repr import show

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


def _split_data_url(url: str) -> tuple[str | None, str] | None:
    """``data:<mime>;base64,<data>`` -> ``(mime, data)``; ``None`` for other URLs."""
    if not url.startswith("data:") or "," not in url:
        return None
    header, data = url[5:].split(",", 1)
    mime = header.split(";", 1)[0]
    return (normalize_mime_type(mime) if mime else None), data


def _strip_data_url(data: str) -> str:
    split = _split_data_url(data)
    return data if split is None else split[1]


def _check_image_url(url: str) -> None:
    mime = None
    if url.startswith("data:"):
        header = url[5:].split(",", 1)[0]
        mime = normalize_mime_type(header.split(";", 1)[0]) if header else None
    if mime is None:
        path = urlparse(url).path
        guessed, _ = mimetypes.guess_type(path)
        mime = normalize_mime_type(guessed) if guessed else None
    if mime is not None and not mime.startswith("image/"):
        raise ValueError(
            f"attachment URL {show(url, 80)} looks like {mime}, but a plain URL attachment must "
            "be an image; pass other media as {'mime_type': ..., 'data': <base64>}"
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
                if not data.startswith(("data:", "http://", "https://")):
                    data = f"data:{mime};base64,{data}"
                return {"type": "image_url", "image_url": {"url": data}}
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
                f"Unsupported attachment MIME type {show(item['mime_type'])} in attachments; use "
                f"{_ACCEPTED}"
            )
        if "type" in item:
            return dict(item)
        raise ValueError(
            "an attachment dict needs 'mime_type' and 'data' (base64), or must be a ready content "
            f"block with 'type'; got keys {show(sorted(item))}"
        )
    raise ValueError(
        f"Unsupported attachment type {type(item).__name__} in attachments: pass a URL string, "
        "a dict with 'mime_type' and 'data', or a list of them"
    )


def normalize_content_blocks(attachments: Any) -> list[dict[str, Any]]:
    """A single attachment or a list of them -> list of content blocks."""
    if attachments is None:
        return []
    items = attachments if isinstance(attachments, (list, tuple)) else [attachments]
    return [attachment_to_content_block(a) for a in items]


def _source_fields(url: str) -> dict[str, Any]:
    """``base64`` + ``mime_type`` for a data URL, ``url`` for anything else."""
    split = _split_data_url(url)
    if split is None:
        return {"url": url}
    mime, data = split
    return {"base64": data, **({"mime_type": mime} if mime else {})}


def to_standard_block(block: Mapping[str, Any]) -> dict[str, Any]:
    """One OpenAI-format content block -> LangChain's standard (provider-neutral) form.

    ``image_url`` -> ``{"type": "image", "base64"|"url": ..., "mime_type": ...}``, ``file`` ->
    ``{"type": "file", ...}`` (PDF), ``input_audio`` -> ``{"type": "audio", ...}``. Text and
    blocks already in another form are returned as new dicts, unchanged.
    """
    kind = block.get("type")
    if kind == "image_url":
        image = block.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        if isinstance(url, str):
            out: dict[str, Any] = {"type": "image", **_source_fields(url)}
            detail = image.get("detail") if isinstance(image, Mapping) else None
            if detail is not None:
                out["extras"] = {"detail": detail}
            return out
    elif kind == "file":
        file = block.get("file")
        if isinstance(file, Mapping):
            out = {"type": "file"}
            if isinstance(file.get("file_data"), str):
                out.update(_source_fields(file["file_data"]))
                if "url" in out:  # bare base64 without a data: header
                    out = {"type": "file", "base64": out.pop("url")}
                out.setdefault("mime_type", "application/pdf")
            elif isinstance(file.get("file_id"), str):
                out["file_id"] = file["file_id"]
            else:
                return dict(block)
            if file.get("filename"):
                out["extras"] = {"filename": file["filename"]}
            return out
    elif kind == "input_audio":
        audio = block.get("input_audio")
        if isinstance(audio, Mapping) and isinstance(audio.get("data"), str):
            fmt = str(audio.get("format") or "wav")
            return {
                "type": "audio",
                "base64": _strip_data_url(audio["data"]),
                "mime_type": normalize_mime_type(f"audio/{fmt}"),
            }
    return dict(block)


def to_standard_content(content: Sequence[Any]) -> list[Any]:
    """A message's list content with every OpenAI-format block in LangChain's standard form."""
    return [to_standard_block(b) if isinstance(b, Mapping) else b for b in content]
