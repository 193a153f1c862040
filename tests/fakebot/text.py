"""Text the way the Bot API sees it: HTML parse mode, UTF-16 offsets, trimming, commands.

``parse_html`` follows TDLib's ``parse_html`` (the code behind ``parse_mode=HTML``): the same
tags, the same entity types and the same error texts, e.g. ``Unsupported start tag "foo" at
byte offset 0`` or ``Can't find end tag corresponding to start tag "b"``. Byte offsets are
UTF-8 offsets into the text as sent; entity offsets and lengths are UTF-16 code units.
"""

from __future__ import annotations

import re

__all__ = [
    "EntityError",
    "command_entities",
    "parse_html",
    "parse_markdown",
    "parse_markdown_v2",
    "trim",
    "utf16_len",
]


class EntityError(ValueError):
    """The text cannot be parsed; ``str(exc)`` is TDLib's message (without the prefix)."""


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


_SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
}
_ALL_TAGS = {*_SIMPLE_TAGS, "a", "span", "tg-emoji"}
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


def _decode_entity(text: str, pos: int) -> tuple[str, int] | None:
    """The character of an HTML entity at ``text[pos] == '&'`` and the position after it."""
    end = pos + 1
    if end < len(text) and text[end] == "#":
        end += 1
        value = 0
        if end < len(text) and text[end] == "x":
            end += 1
            start = end
            while end < len(text) and text[end] in "0123456789abcdefABCDEF":
                end += 1
            value = int(text[start:end], 16) if end > start else 0
        else:
            start = end
            while end < len(text) and text[end].isdigit():
                end += 1
            value = int(text[start:end]) if end > start else 0
        if value == 0 or value >= 0x10FFFF or end - pos >= 10:
            return None
        char = chr(value)
    else:
        start = end
        while end < len(text) and text[end].isascii() and text[end].isalpha():
            end += 1
        char = _NAMED.get(text[start:end])
        if char is None:
            return None
    if end < len(text) and text[end] == ";":
        end += 1
    return char, end


def _byte_offset(text: str, pos: int) -> int:
    return len(text[:pos].encode("utf-8"))


def parse_html(html: str) -> tuple[str, list[dict]]:
    """(plain text, entities) for ``parse_mode=HTML``; raises :class:`EntityError`."""
    out: list[str] = []
    out_len = 0  # UTF-16 length of "".join(out)
    entities: list[dict] = []
    stack: list[dict] = []  # open tags: name, offset, attrs
    i, n = 0, len(html)

    def is_space(ch: str) -> bool:
        return ch in " \t\r\n\f\v"

    while i < n:
        ch = html[i]
        if ch == "&":
            decoded = _decode_entity(html, i)
            if decoded is not None:
                out.append(decoded[0])
                out_len += utf16_len(decoded[0])
                i = decoded[1]
                continue
        if ch != "<":
            out.append(ch)
            out_len += utf16_len(ch)
            i += 1
            continue

        begin = i
        at = _byte_offset(html, begin)
        i += 1
        if i < n and html[i] == "/":
            # an end tag
            i += 1
            if not stack:
                raise EntityError(f"Unexpected end tag at byte offset {at}")
            start = i
            while i < n and not is_space(html[i]) and html[i] != ">":
                i += 1
            name = html[start:i].lower()
            while i < n and is_space(html[i]):
                i += 1
            if i >= n or html[i] != ">":
                raise EntityError(f"Unclosed end tag at byte offset {at}")
            i += 1
            top = stack.pop()
            if name and name != top["name"]:
                raise EntityError(
                    f'Unmatched end tag at byte offset {at}, expected "</{top["name"]}>", '
                    f'found "</{name}>"'
                )
            length = out_len - top["offset"]
            if length > 0:
                entity = _entity_for(top, length)
                if entity is not None:
                    entities.append(entity)
            continue

        # a start tag
        start = i
        while i < n and not is_space(html[i]) and html[i] not in ">/":
            i += 1
        if i >= n:
            raise EntityError(f"Unclosed start tag at byte offset {at}")
        name = html[start:i].lower()
        if name not in _ALL_TAGS:
            raise EntityError(f'Unsupported start tag "{name}" at byte offset {at}')
        attrs: dict[str, str] = {}
        while True:
            while i < n and is_space(html[i]):
                i += 1
            if i >= n:
                raise EntityError(f"Unclosed start tag at byte offset {at}")
            if html[i] == ">":
                i += 1
                break
            if html[i] == "/" and i + 1 < n and html[i + 1] == ">":
                i += 2  # a self-closing tag is treated as an ordinary start tag
                break
            attr_start = i
            while i < n and not is_space(html[i]) and html[i] not in "=>":
                i += 1
            attr_name = html[attr_start:i].lower()
            while i < n and is_space(html[i]):
                i += 1
            if i >= n:
                raise EntityError(f"Unclosed start tag at byte offset {at}")
            if html[i] != "=":
                # an attribute without a value
                if not attr_name:
                    raise EntityError(
                        f'Empty attribute name in the tag "{name}" at byte offset {at}'
                    )
                attrs[attr_name] = ""
                continue
            i += 1
            while i < n and is_space(html[i]):
                i += 1
            if i >= n:
                raise EntityError(f"Unclosed start tag at byte offset {at}")
            if html[i] in "'\"":
                quote = html[i]
                i += 1
                value: list[str] = []
                while i < n and html[i] != quote:
                    if html[i] == "&":
                        decoded = _decode_entity(html, i)
                        if decoded is not None:
                            value.append(decoded[0])
                            i = decoded[1]
                            continue
                    value.append(html[i])
                    i += 1
                if i >= n:
                    raise EntityError(f"Unclosed start tag at byte offset {at}")
                i += 1
                attrs[attr_name] = "".join(value)
            else:
                token_start = i
                while i < n and (html[i].isalnum() or html[i] in ".-"):
                    i += 1
                if i < n and not is_space(html[i]) and html[i] != ">":
                    raise EntityError(
                        "Unexpected end of name token at byte offset "
                        f"{_byte_offset(html, token_start)}"
                    )
                attrs[attr_name] = html[token_start:i].lower()
        if name == "span" and attrs.get("class") != "tg-spoiler":
            raise EntityError(f'Tag "span" must have class "tg-spoiler" at byte offset {at}')
        stack.append({"name": name, "offset": out_len, "attrs": attrs})

    if stack:
        raise EntityError(f'Can\'t find end tag corresponding to start tag "{stack[-1]["name"]}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _entity_for(tag: dict, length: int) -> dict | None:
    name, attrs, offset = tag["name"], tag["attrs"], tag["offset"]
    if name in _SIMPLE_TAGS:
        kind = _SIMPLE_TAGS[name]
        if kind == "blockquote" and "expandable" in attrs:
            kind = "expandable_blockquote"
        entity = {"type": kind, "offset": offset, "length": length}
        if name == "code" and attrs.get("class", "").startswith("language-"):
            entity = {"type": "pre", "offset": offset, "length": length,
                      "language": attrs["class"][len("language-"):]}
        return entity
    if name == "span":
        return {"type": "spoiler", "offset": offset, "length": length}
    if name == "tg-emoji":
        return {"type": "custom_emoji", "offset": offset, "length": length,
                "custom_emoji_id": attrs.get("emoji-id", "")}
    # <a>
    url = attrs.get("href")
    if not url:
        return None
    match = re.fullmatch(r"tg://user\?id=(\d+)", url)
    if match:
        return {"type": "text_mention", "offset": offset, "length": length,
                "user": {"id": int(match.group(1)), "is_bot": False, "first_name": ""}}
    return {"type": "text_link", "offset": offset, "length": length, "url": url}


def trim(text: str, entities: list[dict]) -> tuple[str, list[dict]]:
    """Telegram strips leading and trailing white space; entities follow the text."""
    stripped = text.strip()
    if stripped == text:
        return text, entities
    left = utf16_len(text[: len(text) - len(text.lstrip())])
    size = utf16_len(stripped)
    result = []
    for entity in entities:
        start = max(entity["offset"] - left, 0)
        end = min(entity["offset"] + entity["length"] - left, size)
        if end > start:
            result.append({**entity, "offset": start, "length": end - start})
    return stripped, result


_COMMAND = re.compile(r"/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?")


def command_entities(text: str) -> list[dict]:
    """``bot_command`` entities as Telegram marks them: a command starting the text or a word."""
    entities = []
    for match in _COMMAND.finditer(text):
        start = match.start()
        if start > 0 and not text[start - 1].isspace():
            continue
        end = match.end()
        if end < len(text) and (text[end].isalnum() or text[end] in "_/@"):
            continue
        entities.append({"type": "bot_command", "offset": utf16_len(text[:start]),
                         "length": utf16_len(match.group())})
    return entities


_MD2_RESERVED = "_*[]()~`>#+-=|{}.!"
_MD2_ESCAPE = "Character '{}' is reserved and must be escaped with the preceding '\\'"


def _link_entity(url: str, offset: int, length: int) -> dict:
    match = re.fullmatch(r"tg://user\?id=(\d+)", url)
    if match:
        return {"type": "text_mention", "offset": offset, "length": length,
                "user": {"id": int(match.group(1)), "is_bot": False, "first_name": ""}}
    return {"type": "text_link", "offset": offset, "length": length, "url": url}


def parse_markdown_v2(text: str) -> tuple[str, list[dict]]:
    """(plain text, entities) for ``parse_mode=MarkdownV2``, after TDLib's parser."""
    out: list[str] = []
    out_len = 0
    entities: list[dict] = []
    stack: list[dict] = []  # type, offset (UTF-16), at (byte offset), begin (index in out)
    quote: dict | None = None  # the open blockquote, if the current line is quoted
    i, n = 0, len(text)

    def at(pos: int) -> int:
        return len(text[:pos].encode("utf-8"))

    def emit(chars: str) -> None:
        nonlocal out_len
        out.append(chars)
        out_len += utf16_len(chars)

    while i < n:
        c = text[i]
        line_start = i == 0 or text[i - 1] == "\n"
        if line_start and not stack:
            if c == ">":
                if quote is None:
                    quote = {"offset": out_len}
                i += 1
                continue
            if quote is not None:
                length = out_len - quote["offset"]
                if out and out[-1] == "\n":
                    length -= 1
                if length > 0:
                    entities.append({"type": "blockquote", "offset": quote["offset"],
                                     "length": length})
                quote = None
        if c == "\\" and i + 1 < n and 0 < ord(text[i + 1]) <= 126:
            emit(text[i + 1])
            i += 2
            continue
        top = stack[-1]["type"] if stack else None
        reserved = "`" if top in ("code", "pre") else _MD2_RESERVED
        if c not in reserved:
            emit(c)
            i += 1
            continue
        following = text[i + 1] if i + 1 < n else ""
        ends = {
            "bold": c == "*",
            "italic": c == "_" and following != "_",
            "underline": c == "_" and following == "_",
            "strikethrough": c == "~",
            "spoiler": c == "|" and following == "|",
            "code": c == "`",
            "pre": c == "`" and text[i:i + 3] == "```",
            "text_link": c == "]",
            "custom_emoji": c == "]",
        }.get(top or "", False)
        if not ends:
            begin = i
            kind = ""
            language = ""
            if c == "_":
                kind = "underline" if following == "_" else "italic"
                i += 2 if kind == "underline" else 1
            elif c in "*~":
                kind = "bold" if c == "*" else "strikethrough"
                i += 1
            elif c == "|" and following == "|":
                kind = "spoiler"
                i += 2
            elif c == "[":
                kind = "text_link"
                i += 1
            elif c == "`":
                if text[i:i + 3] == "```":
                    kind = "pre"
                    i += 3
                    end = i
                    while end < n and not text[end].isspace() and text[end] != "`":
                        end += 1
                    if end < n and text[end] == "\n":
                        language, i = text[i:end], end + 1
                else:
                    kind = "code"
                    i += 1
            elif c == "!" and following == "[":
                kind = "custom_emoji"
                i += 2
            else:
                raise EntityError(_MD2_ESCAPE.format(c))
            stack.append({"type": kind, "offset": out_len, "at": at(begin),
                          "begin": len(out), "language": language})
            continue
        entity = stack.pop()
        kind = entity["type"]
        i += {"underline": 2, "spoiler": 2, "pre": 3}.get(kind, 1)
        length = out_len - entity["offset"]
        extra: dict = {}
        if kind in ("text_link", "custom_emoji"):
            url = ""
            if i < n and text[i] == "(":
                i += 1
                url_start = i
                chars = []
                while i < n and text[i] != ")":
                    if text[i] == "\\" and i + 1 < n and 0 < ord(text[i + 1]) <= 126:
                        chars.append(text[i + 1])
                        i += 2
                        continue
                    chars.append(text[i])
                    i += 1
                if i >= n:
                    raise EntityError(f"Can't find end of a URL at byte offset {at(url_start)}")
                i += 1
                url = "".join(chars)
            elif kind == "text_link":
                url = "".join(out[entity["begin"]:])
            if kind == "custom_emoji":
                match = re.fullmatch(r"tg://emoji\?id=(\d+)", url)
                if not match:
                    raise EntityError("Custom emoji entity must contain a tg://emoji URL")
                extra = {"custom_emoji_id": match.group(1)}
            elif length > 0 and url:
                entities.append(_link_entity(url, entity["offset"], length))
                continue
        if kind == "pre" and entity["language"]:
            extra = {"language": entity["language"]}
        if length > 0:
            entities.append({"type": kind, "offset": entity["offset"], "length": length,
                             **extra})
    if stack:
        raise EntityError(
            f"Can't find end of the entity starting at byte offset {stack[-1]['at']}")
    if quote is not None and out_len > quote["offset"]:
        entities.append({"type": "blockquote", "offset": quote["offset"],
                         "length": out_len - quote["offset"]})
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def parse_markdown(text: str) -> tuple[str, list[dict]]:
    """(plain text, entities) for the legacy ``parse_mode=Markdown``."""
    out: list[str] = []
    out_len = 0
    entities: list[dict] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in "_*`[":
            out.append(text[i + 1])
            out_len += 1
            i += 2
            continue
        if c not in "_*`[":
            out.append(c)
            out_len += utf16_len(c)
            i += 1
            continue
        begin_at = len(text[:i].encode("utf-8"))
        if c == "`" and text[i:i + 3] == "```":
            end = text.find("```", i + 3)
            if end < 0:
                raise EntityError(f"Can't find end of the entity starting at byte offset "
                                  f"{begin_at}")
            body = text[i + 3:end]
            language = ""
            first, newline, rest = body.partition("\n")
            if newline and first and " " not in first:
                language, body = first, rest
            if body:
                entity = {"type": "pre", "offset": out_len, "length": utf16_len(body)}
                if language:
                    entity["language"] = language
                entities.append(entity)
            out.append(body)
            out_len += utf16_len(body)
            i = end + 3
            continue
        close = {"_": "_", "*": "*", "`": "`", "[": "]"}[c]
        end = text.find(close, i + 1)
        if end < 0:
            raise EntityError(f"Can't find end of the entity starting at byte offset {begin_at}")
        body = text[i + 1:end]
        i = end + 1
        kind = {"_": "italic", "*": "bold", "`": "code"}.get(c)
        entity: dict | None = None
        if c == "[":
            url = ""
            if i < n and text[i] == "(":
                url_end = text.find(")", i)
                if url_end < 0:
                    raise EntityError(f"Can't find end of a URL at byte offset "
                                      f"{len(text[:i].encode('utf-8'))}")
                url, i = text[i + 1:url_end], url_end + 1
            if url and body:
                entity = _link_entity(url, out_len, utf16_len(body))
        elif body:
            entity = {"type": kind, "offset": out_len, "length": utf16_len(body)}
        if entity is not None:
            entities.append(entity)
        out.append(body)
        out_len += utf16_len(body)
    return "".join(out), entities
