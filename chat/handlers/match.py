"""Commands about a running or finished match: ``/hand``, ``/board``, ``/score``, ``/hint``,
``/export``, ``/resign``, ``/cancel``, ``/leave``, ``/kick``, ``/back``, ``/settings``."""

from __future__ import annotations

from dataclasses import replace

from telegram import Update
from telegram.constants import ChatType

from chat.flow import StoredMatch
from chat.handlers.context import (
    BotContext,
    Handler,
    Services,
    actor_of,
    answer,
    is_admin,
    reply_kind,
    reply_tr,
    say,
    services,
    thread_of,
)
from chat.handlers.moves import target_match
from chat.i18n import Tr
from chat.model import (
    ascii_number,
)
from chat.notices import Drawing, Send
from chat.painter import draw_replay


def match_command(kind: str) -> Handler:
    async def handler(update: Update, context: BotContext) -> None:
        svc = services(context)
        tr = await reply_tr(svc, update)
        chat = update.effective_chat
        if chat is None:
            return
        stored = None
        if kind == "export" and context.args:
            # /export N: a match from /history (of this chat, or one the user played).
            stored = await match_by_number(svc, update, tr, context.args[0])
            if stored is None:
                return
        elif kind in ("export", "score", "board"):
            # After a match too: the newest one the user played here.
            stored = await svc.flow.latest_match(chat.id, thread_of(update),
                                                 actor_of(update).user_id)
        stored = stored or await target_match(svc, update, tr)
        if stored is None:
            return
        actor = actor_of(update)
        seated = stored.row.seat_of(actor.user_id) is not None
        flow = svc.flow
        if kind == "hand":
            if not seated:
                await say(svc, update, tr._("You are not playing in this match."))
                return
            svc.delivery.run([await flow.hand(stored, actor.user_id)])
        elif kind == "board":
            notices = await flow.board(stored, chat.id, thread_of(update), actor.user_id)
            svc.delivery.run([replace(n, info=reply_kind(svc, update))
                              if isinstance(n, Send) and n.panel_of is None else n
                              for n in notices])
        elif kind == "score":
            await say(svc, update, await flow.score(stored, tr))
        elif kind == "hint":
            seat = stored.row.seat_of(actor.user_id)
            utr = await flow.user_tr(actor.user_id)
            if seat is None or stored.game.current_player != seat:
                svc.delivery.run([Send(actor.user_id, utr._("A hint is given on your own turn."))])
                return
            svc.delivery.run([await flow.hint_notice(stored, seat, actor.user_id)])
        elif kind == "export":
            await export(svc, update, stored, tr)
        elif kind == "resign":
            await answer(svc, update, await flow.resign(stored, actor))
        elif kind == "cancel":
            await answer(svc, update, await flow.cancel(stored, actor,
                                                        await is_admin(update, context)))

    handler.__name__ = f"match_{kind}"
    return handler


async def leave_match(svc: Services, update: Update) -> None:
    """``/leave`` during a match: the computer plays the seat from now on."""
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    assert chat is not None
    actor = actor_of(update)
    if chat.type == ChatType.PRIVATE:
        stored = next(iter(await svc.flow.my_matches(actor.user_id)), None)
    else:
        stored = await svc.flow.find_match(chat.id, thread_of(update), actor.user_id)
    seat = stored.row.seat_of(actor.user_id) if stored else None
    if stored is None or seat is None:
        await say(svc, update, tr._("You are not seated at a table here."))
        return
    if chat.type == ChatType.PRIVATE and stored.row.chat_id > 0:
        await say(svc, update, tr._("Alone against the computer: /resign ends the match."))
        return
    group_tr = await svc.flow.chat_tr(stored.row.chat_id)
    svc.delivery.run(await svc.flow.timers.hand_over(stored, seat, group_tr._(
        "{name} left the table: the computer plays for them from now on (/back returns).",
        name=actor.name)))


async def kick(update: Update, context: BotContext) -> None:
    """``/kick NAME|SEAT`` (or in reply to the player): the creator or an admin hands an
    absent player's seat to the computer."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None or chat.type == ChatType.PRIVATE:
        if chat is not None:
            await say(svc, update, tr._("/kick works in a group, for a player there."))
        return
    actor = actor_of(update)
    stored = await svc.flow.find_match(chat.id, thread_of(update), actor.user_id)
    if stored is None:
        await say(svc, update, tr._("No match is being played here. /new sets one up."))
        return
    if not (await svc.flow.created(stored.match_id, actor.user_id)
            or await is_admin(update, context)):
        await say(svc, update, tr._("Only the creator or a chat admin can do that."))
        return
    names = await svc.flow.seat_names(stored.row, tr)
    target: int | None = None
    message = update.effective_message
    replied = message.reply_to_message if message is not None else None
    if replied is not None and replied.from_user is not None:
        target = stored.row.seat_of(replied.from_user.id)
    elif context.args:
        wanted = " ".join(context.args).strip().lstrip("@").lower()[:64]
        if ascii_number(wanted) and 1 <= int(wanted) <= len(names):
            target = int(wanted) - 1
        else:
            target = next((i for i, n in enumerate(names) if n.lower() == wanted), None)
    if target is None or stored.row.seats[target].user_id is None:
        await say(svc, update, tr._("Whom? Reply to the player's message with /kick, or write "
                                    "/kick and their name or seat number."))
        return
    svc.delivery.run(await svc.flow.timers.hand_over(stored, target, tr._(
        "{name} was taken off the table: the computer plays for them from now on (/back "
        "returns).", name=names[target])))


async def settings(update: Update, context: BotContext) -> None:
    """``/settings [tidy=on|off]``: the group's own settings (admins change them)."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    if chat.type == ChatType.PRIVATE:
        await say(svc, update, tr._("/settings is for groups. Here, /lang changes the "
                                    "language."))
        return
    args = [a.lower() for a in (context.args or [])][:3]
    if args:
        if not await is_admin(update, context):
            await say(svc, update, tr._("Only a chat admin can change the settings."))
            return
        choice = {"tidy=on": True, "tidy=off": False}.get(args[0])
        if choice is None:
            await say(svc, update, tr._("I did not understand that. Try /settings tidy=on or "
                                        "/settings tidy=off."))
            return
        await svc.flow.set_tidy(chat.id, choice)
        svc.delivery.set_tidy(chat.id, choice)
    tidy = await svc.delivery.is_tidy(chat.id)
    await say(svc, update, "\n".join([
        tr._("Settings of this chat:"),
        tr._("• Keep only the newest board post: {state}.",
             state=tr._("on") if tidy else tr._("off")),
        tr._("Admins change it with /settings tidy=on or /settings tidy=off."),
    ]))


async def back(update: Update, context: BotContext) -> None:
    """``/back``: take the seat back from the computer that played for you."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    actor = actor_of(update)
    if chat.type == ChatType.PRIVATE:
        matches = await svc.flow.my_matches(actor.user_id)
    else:
        found = await svc.flow.find_match(chat.id, thread_of(update), actor.user_id)
        matches = [found] if found else []
    if not matches:
        await say(svc, update, tr._("You are not in a match."))
        return
    await answer(svc, update, await svc.flow.timers.back(actor, matches))


async def match_by_number(svc: Services, update: Update, tr: Tr, word: str
                          ) -> StoredMatch | None:
    chat = update.effective_chat
    assert chat is not None
    number = word.lstrip("#")
    stored = None
    if ascii_number(number) and len(number) < 12:
        stored = await svc.flow.by_number(int(number))
    if stored is not None and chat.type != ChatType.PRIVATE:
        if stored.row.chat_id != chat.id:
            stored = None
    elif stored is not None and stored.row.seat_of(actor_of(update).user_id) is None:
        stored = None
    if stored is None:
        await say(svc, update, tr._("There is no match {number} here: /history lists them.",
                                    number=word[:12]))
    return stored


async def export(svc: Services, update: Update, stored: StoredMatch, tr: Tr) -> None:
    chat = update.effective_chat
    assert chat is not None
    finished = sum(1 for t in stored.game.tours if t.is_over)
    data = svc.exports.get((stored.match_id, finished))
    if data is None:
        data, finished = svc.flow.export(stored)
        svc.exports.put((stored.match_id, finished), data)
    if not finished:
        await say(svc, update, tr._("No tour is finished yet: the record is sent when a tour "
                                    "is over (a running tour's record would show the hands)."))
        return
    group = chat.type != ChatType.PRIVATE
    notices = [Send(chat.id, tr.n_("The record of {n} finished tour.",
                                   "The record of {n} finished tours.", finished),
                    thread_id=thread_of(update), document=(f"krendzu-{stored.match_id}.json",
                                                           data), group=group,
                    info=reply_kind(svc, update, "/record"))]
    # Drawn when its turn to be sent comes, once per (match, tour) while the painter keeps
    # it: twenty /export in a row queue twenty small notices sharing one record.
    gif = Drawing(draw_replay, (data, finished - 1), key=("replay", stored.match_id, finished))
    notices.append(Send(chat.id, tr._("Replay of tour {t}.", t=finished),
                        thread_id=thread_of(update), animation=("replay.gif", gif), group=group,
                        info=reply_kind(svc, update, "/replay")))
    svc.delivery.run(notices)
