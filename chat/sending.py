"""One notice, one or two Bot API calls: pictures drawn when they go out, keyboards, the
caption and text limits, and the messages delivery must find again (the private panels, a
tidy group's board post, a private board that follows computer moves).

:class:`Sender` knows nothing of queues, pacing or retries (:mod:`chat.delivery` does): it
sends one notice and raises what Telegram answered. The ids of the messages it edits later
are kept in the store (panels, board posts), so another process or a restart edits the same
message; only two courtesies are this process's own: which private chat's newest message is
a followed board (lost, the next board is a new photo) and which groups were told that a
player cannot be written to (lost, the group may be told once more).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from telegram import Bot, InputMediaPhoto, Message, ReplyParameters
from telegram.error import BadRequest, ChatMigrated, Forbidden, TelegramError

from chat import ephemeral
from chat.board_sending import BoardSending
from chat.ephemeral import EphemeralId
from chat.ephemeral_sending import EphemeralSending, remembers_panel, told_notes
from chat.lobby_sending import LobbySending
from chat.markers import Ride, riding
from chat.markup import CAPTION_LIMIT, TEXT_LIMIT, fit, markup
from chat.notices import (
    BoardClock,
    BoardPost,
    Drawing,
    DropPanel,
    EditPanel,
    Ephemeral,
    Notice,
    Send,
    ShowLobby,
    Told,
)
from chat.painter import Painter
from storage import PanelMessage, Store

log = logging.getLogger(__name__)

class Sender(BoardSending, EphemeralSending, LobbySending):
    def __init__(self, bot: Bot, store: Store, painter: Painter) -> None:
        self.bot = bot
        self.store = store
        self.painter = painter
        #: Set by the application: text for the group when a player cannot be written to.
        self.on_forbidden: Callable[[int, int], Awaitable[None]] | None = None
        self.moved: dict[int, int] = {}  # group → supergroup after a migration
        #: (match, user) pairs whose group was told the user cannot be written to.
        self._told: set[tuple[int, int]] = set()
        #: Private chats whose newest message is a board following computer moves:
        #: chat → (message id, the post as it shows). The next such board edits it in place.
        self._follow: dict[int, tuple[int, BoardPost]] = {}
        self.slot = lambda chat_id, **_: contextlib.nullcontext()  # (EphemeralSending's)
        self.on_bot_admin = None
        self.pushes_refused = set()

    async def deliver(self, notice: Notice, ride: Ride | None = None) -> Message | None:
        """Make the calls of one notice; the message a :class:`Send` made (``None`` for the
        other notices, and for a send that could not be made; ``ride``: :mod:`chat.markers`)."""
        if isinstance(notice, Send | Ephemeral):
            message = await (self.send_ephemeral(notice, notes=True)
                             if isinstance(notice, Ephemeral)
                             else self.send(notice, notes=True, ride=ride))
            if isinstance(notice, Send) and notice.drops_panel:
                await self._drop(notice.match_id or 0, notice.chat_id, notice.replaces, ride,
                                 forget=True, told=notice.told if message else None)
            elif not remembers_panel(notice, message):  # else noted with the panel
                await self._note(notice.told, ride=ride)
            return message
        if isinstance(notice, BoardPost):
            await self._board(notice, ride)
        elif isinstance(notice, ShowLobby):
            await self._lobby(notice)
        elif isinstance(notice, BoardClock):
            await self._board_clock(notice)
        elif isinstance(notice, EditPanel):
            await self.edit_panel(notice)
            await self._note(notice.told, ride=ride)
        elif isinstance(notice, DropPanel):
            await self._drop(notice.match_id, notice.user_id, notice.note, ride,
                             forget=notice.forget_lines)
        return None

    async def _drop(self, match_id: int, user_id: int, note: str | None, ride: Ride | None,
                    *, forget: bool, told: Told | None = None) -> None:
        """Forget the player's panel (``forget``: its lines too; ``told``: noted in the
        same write, a record sent in its place), then retire the message it was."""
        known = await riding(ride, match_id, lambda announced, end: self.store.set_panel(
            match_id, user_id, None, announced=announced, notes={told[1]: 0} if told else None,
            lines={user_id: None} if forget else None, also=end))
        if known:
            await self._retire_panel(user_id, known, note)

    async def _note(self, told: Told | None, seq: int = 0, *, ride: Ride | None = None) -> None:
        """Telegram took the notice: note it (:data:`chat.notices.Told`) at once, so that
        an announcement run again (its worker killed) does not tell it twice (``ride``: the
        marker moved with it). A note not written costs a repeat after a kill, not delivery."""
        if told is None:
            return
        try:
            await riding(ride, told[0], lambda announced, end: self.store.note_told(
                *told, seq=seq, announced=announced, also=end))
        except Exception:
            log.warning("match %s: could not note %s as delivered", told[0], told[1],
                        exc_info=True)

    # Private panels ---------------------------------------------------------------------

    async def knows_panel(self, match_id: int, user_id: int) -> bool:
        return await self.store.get_panel(match_id, user_id) is not None

    async def panel_pressed(self, match_id: int, user_id: int, message_id: int, *,
                            is_photo: bool, in_group: int | None = None) -> None:
        """A button of ``message_id`` was pressed: it is the player's panel (a message sent
        before the panel was stored is learnt this way), so the next edit goes there.
        ``in_group``: an ephemeral message of that group, ``message_id`` its ephemeral id."""
        await self.store.set_panel(match_id, user_id,
                                   PanelMessage(message_id, is_photo, in_group))

    async def edit_panel(self, notice: EditPanel, *, answer: bool = False) -> None:
        known = await self.store.get_panel(notice.match_id, notice.user_id)
        if known is None:
            await self._send_fallback(notice)
            return
        message_id, is_photo, group = known
        try:
            if group is not None:
                await self._edit_ephemeral(EphemeralId(group, notice.user_id, message_id),
                                           is_photo, notice, answer=answer)
                return
            if is_photo and notice.picture is not None:
                # A move changed the position: the photo goes with the caption, in one call.
                data = await self.painter.board(notice.picture)
                await self.bot.edit_message_media(
                    InputMediaPhoto(data, caption=fit(notice.text, CAPTION_LIMIT)),
                    chat_id=notice.user_id, message_id=message_id,
                    reply_markup=markup(notice.keyboard))
            elif is_photo:
                await self.bot.edit_message_caption(
                    notice.user_id, message_id, caption=fit(notice.text, CAPTION_LIMIT),
                    reply_markup=markup(notice.keyboard))
            else:
                await self.bot.edit_message_text(
                    fit(notice.text, TEXT_LIMIT), notice.user_id, message_id,
                    reply_markup=markup(notice.keyboard))
        except BadRequest as exc:
            if "not modified" in str(exc):
                return
            log.info("panel edit failed (%s); sending a new one", exc)
            await self.store.set_panel(notice.match_id, notice.user_id, None)
            await self._send_fallback(notice, in_group=group is not None)
            return
        if notice.keyboard is None:
            await self.store.set_panel(notice.match_id, notice.user_id, None)

    # Messages ---------------------------------------------------------------------------

    async def send(self, send: Send, *, notes: bool = False,
                   ride: Ride | None = None) -> Message | None:
        """Send one message; ``notes``: a panel it makes is remembered with the send's told
        key noted in the same write (:func:`~chat.ephemeral_sending.remembers_panel`), and
        the marker ``ride`` lets it move."""
        chat_id = self.moved.get(send.chat_id, send.chat_id)
        kwargs: dict[str, Any] = {
            "chat_id": chat_id, "reply_markup": markup(send.keyboard),
            "disable_notification": send.silent,
        }
        if send.thread_id:
            kwargs["message_thread_id"] = send.thread_id
        if send.reply_to is not None:  # gone meanwhile: sent all the same, as a message
            kwargs["reply_parameters"] = ReplyParameters(send.reply_to,
                                                         allow_sending_without_reply=True)
        try:
            message = await self._call_send(send, kwargs)
        except ChatMigrated as exc:
            self.moved[send.chat_id] = exc.new_chat_id
            with contextlib.suppress(Exception):
                await self.store.migrate_chat(send.chat_id, exc.new_chat_id)
            kwargs["chat_id"] = exc.new_chat_id
            message = await self._call_send(send, kwargs)
        except Forbidden:
            if send.chat_id > 0:
                await self._forbidden(send)
            else:
                log.info("chat %s does not let me write (removed?)", send.chat_id)
            return None
        if message is not None and send.chat_id > 0:
            self._told = {t for t in self._told if t[1] != send.chat_id}
            self._follow.pop(send.chat_id, None)  # a newer message: stop editing the old
        if message is not None and send.panel_of is not None:
            match_id, user_id = send.panel_of
            panel = PanelMessage(message.message_id, send.picture is not None)
            old = await riding(ride, match_id, lambda announced, end: self.store.set_panel(
                match_id, user_id, panel, notes=told_notes(send, notes), announced=announced,
                lines=None if send.lines is None else {user_id: send.lines}, also=end))
            if old and (old.message_id, old.in_group) != (message.message_id, None):
                await self._retire_panel(chat_id, old, send.replaces)
        return message

    async def _retire_panel(self, chat_id: int, old: PanelMessage,
                            note: str | None) -> None:
        """A newer panel replaced ``old`` (message id, whether a photo): its keyboard goes
        and its caption (or text) becomes ``note``, in one call.

        The whole caption is replaced rather than a line added: the old one still asked for
        a move ("Your move: choose a card"), and a short note that describes no position can
        never disagree with the older board its photo shows; the newer panel below says
        everything current. Without a note only the keyboard goes."""
        message_id, is_photo, group = old
        if group is not None:
            # An ephemeral panel: gone rather than noted (its player alone saw it, and one
            # left behind would only ask again for a move already made). A deletion is no
            # message: it takes no slot of the group's window.
            with contextlib.suppress(TelegramError):
                await ephemeral.delete(self.bot, EphemeralId(group, chat_id, message_id))
            return
        if note:
            try:
                if is_photo:
                    await self.bot.edit_message_caption(chat_id, message_id, caption=note,
                                                        reply_markup=None)
                else:
                    await self.bot.edit_message_text(note, chat_id, message_id,
                                                     reply_markup=None)
                return
            except TelegramError as exc:  # gone, or not the kind remembered: keys at least
                log.info("could not mark the replaced panel (%s)", exc)
        with contextlib.suppress(TelegramError):
            await self.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None)

    async def _call_send(self, send: Send, kwargs: dict[str, Any]) -> Message | None:
        """One send. Flood waits are the rate limiter's; network trouble and longer flood
        waits reach the chat's worker, which tries again with back-off."""
        send = await self._draw(send)
        if send.picture is not None or send.hand is not None or send.photo:
            try:
                return await self._send_picture(send, kwargs)
            except BadRequest as exc:
                if "rights" not in str(exc).lower() and "photo" not in str(exc).lower():
                    raise
                log.info("chat %s refuses photos: sending text", kwargs["chat_id"])
        if send.document is not None:
            name, data = send.document
            return await self.bot.send_document(
                document=data, filename=name, caption=fit(send.text, CAPTION_LIMIT), **kwargs)
        if send.animation is not None:
            name, drawn = send.animation
            assert isinstance(drawn, bytes), "drawn by _draw"
            return await self.bot.send_animation(animation=drawn, filename=name,
                                                 caption=fit(send.text, CAPTION_LIMIT), **kwargs)
        return await self.bot.send_message(text=fit(send.text, TEXT_LIMIT), **kwargs)

    async def _draw(self, send: Send) -> Send:
        """Draw the reply's picture (:class:`Drawing`) when its turn comes: never for a reply
        dropped from the queue."""
        if isinstance(send.photo, Drawing):
            send = replace(send, photo=await self.painter.draw(send.photo))
        if send.animation is not None:
            name, drawing = send.animation
            if isinstance(drawing, Drawing):
                send = replace(send, animation=(name, await self.painter.draw(drawing)))
        return send

    async def _send_picture(self, send: Send, kwargs: dict[str, Any]) -> Message:
        data: bytes
        if isinstance(send.photo, bytes) and send.photo:
            data = send.photo
        elif send.picture is not None:
            data = await self.painter.board(send.picture)
        else:
            assert send.hand is not None
            data = await self.painter.hand(send.hand, send.language, send.hand_title)
        return await self.bot.send_photo(photo=data, caption=fit(send.text, CAPTION_LIMIT),
                                         **kwargs)

    # Players who cannot be written to ---------------------------------------------------

    async def report_unreachable(self, match_id: int, user_id: int) -> None:
        """Tell the match's group (once, until the user can be written to again) that a
        seated player cannot get their cards."""
        if self.on_forbidden is None or (match_id, user_id) in self._told:
            return
        self._told.add((match_id, user_id))
        await self.on_forbidden(match_id, user_id)

    async def _forbidden(self, send: Send) -> None:
        with contextlib.suppress(Exception):
            row = await self.store.get_user(send.chat_id)
            if row is not None:
                await self.store.upsert_user(send.chat_id, row.display_name,
                                             can_write_privately=False)
        match_id = send.match_id or (send.panel_of[0] if send.panel_of else None)
        if match_id is not None:
            await self.report_unreachable(match_id, send.chat_id)
