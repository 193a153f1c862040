"""Commands about a running or finished match: ``/hand``, ``/board``, ``/score``, ``/hint``,
``/moves``, ``/export``, ``/resign``, ``/cancel``, ``/leave``, ``/kick``, ``/back``,
``/settings``."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from chat.flow import StoredMatch
from chat.handlers.context import Call, Handler, handler
from chat.handlers.moves import target_match
from chat.handlers.pool import personal_settings
from chat.i18n import picture_texts
from chat.model import ascii_number
from chat.notices import Drawing, Send
from chat.painter import draw_replay


async def match_op(call: Call, kind: str) -> None:
    """``/hand``, ``/board``, ``/score``, ``/hint``, ``/moves``, ``/export``, ``/resign``,
    ``/cancel`` on the match they mean."""
    tr, flow, actor = call.tr, call.flow, call.actor
    if kind in ("hand", "hint") and await call.private_chat_closed():
        return  # answered privately: the group was told to open the private chat
    stored = None
    if kind == "export" and call.args:
        # /export N: a match from /history (of this chat, or one the user played).
        stored = await match_by_number(call, call.args[0])
        if stored is None:
            return
    elif kind in ("export", "score", "board", "moves"):
        # After a match too: the newest one the user played here.
        stored = await flow.latest_match(call.chat.id, call.thread, actor.user_id)
    stored = stored or await target_match(call)
    if stored is None:
        return
    seat = stored.row.seat_of(actor.user_id)
    if kind == "hand":
        if seat is None:
            await call.say(tr._("You are not playing in this match."))
            return
        call.deliver([await flow.hand(stored, actor.user_id)])
    elif kind == "board":
        notices = await flow.board(stored, call.chat.id, call.thread, actor.user_id)
        await call.inform([replace(n, info=call.reply_kind())
                           if isinstance(n, Send) and n.panel_of is None else n
                           for n in notices])
    elif kind == "score":
        await call.say(await flow.score(stored, tr))
    elif kind == "hint":
        if seat is None or stored.game.current_player != seat:
            utr = await flow.user_tr(actor.user_id)
            call.deliver([Send(actor.user_id, utr._("A hint is given on your own turn."))])
            return
        call.deliver([await flow.hint_notice(stored, seat, actor.user_id)])
    elif kind == "moves":
        await moves(call, stored)
    elif kind == "export":
        await export(call, stored)
    elif kind == "resign":
        await call.answer(await flow.resign(stored, actor, update_id=call.update.update_id))
    elif kind == "cancel":
        await call.answer(await flow.cancel(stored, actor, await call.is_admin()))


async def moves(call: Call, stored: StoredMatch) -> None:
    """``/moves [T]``: the numbered moves of the tour being played (or of tour T) as text;
    only cards on the board are named, so the group may read it."""
    tour = None
    if call.args:
        word = call.args[0].lstrip("#")
        if not (ascii_number(word) and len(word) < 4):
            await call.say(call.tr._("/moves lists the tour being played; /moves 2 lists "
                                     "tour 2."))
            return
        tour = int(word)
    await call.say(await call.flow.moves(stored, call.tr, tour))


def match_command(kind: str) -> Handler:
    async def body(call: Call) -> None:
        await match_op(call, kind)

    body.__name__ = f"match_{kind}"
    return handler(body)


async def leave_match(call: Call) -> None:
    """``/leave`` during a match: the computer plays the seat from now on."""
    actor = call.actor
    if call.private:
        stored = next(iter(await call.flow.my_matches(actor.user_id)), None)
    else:
        stored = await call.flow.find_match(call.chat.id, call.thread, actor.user_id)
    seat = stored.row.seat_of(actor.user_id) if stored else None
    if stored is None or seat is None:
        await call.say(call.tr._("You are not seated at a table here."))
        return
    if call.private and stored.row.chat_id > 0:
        await call.say(call.tr._("Alone against the computer: /resign ends the match."))
        return
    group_tr = await call.flow.chat_tr(stored.row.chat_id)
    call.deliver(await call.flow.ticker.hand_over(stored, seat, group_tr._(
        "{name} left the table: the computer plays for them from now on (/back returns).",
        name=actor.name), update_id=call.update.update_id))


@handler
async def kick(call: Call) -> None:
    """``/kick NAME|SEAT`` (or in reply to the player): the creator or an admin hands an
    absent player's seat to the computer."""
    tr = call.tr
    if call.private:
        await call.say(tr._("/kick works in a group, for a player there."))
        return
    stored = await call.flow.find_match(call.chat.id, call.thread, call.actor.user_id)
    if stored is None:
        await call.say(tr._("No match is being played here. /new sets one up."))
        return
    if not (await call.flow.created(stored.match_id, call.actor.user_id)
            or await call.is_admin()):
        await call.say(tr._("Only the creator or a chat admin can do that."))
        return
    names = await call.flow.seat_names(stored.row, tr)
    target: int | None = None
    message = call.update.effective_message
    replied = message.reply_to_message if message is not None else None
    if replied is not None and replied.from_user is not None:
        target = stored.row.seat_of(replied.from_user.id)
    elif call.args:
        wanted = " ".join(call.args).strip().lstrip("@").lower()[:64]
        if ascii_number(wanted) and 1 <= int(wanted) <= len(names):
            target = int(wanted) - 1
        else:
            target = next((i for i, n in enumerate(names) if n.lower() == wanted), None)
    if target is None or stored.row.seats[target].user_id is None:
        await call.say(tr._("Whom? Reply to the player's message with /kick, or write /kick "
                            "and their name or seat number."))
        return
    call.deliver(await call.flow.ticker.hand_over(stored, target, tr._(
        "{name} was taken off the table: the computer plays for them from now on (/back "
        "returns).", name=names[target]), update_id=call.update.update_id))


@handler
async def settings(call: Call) -> None:
    """``/settings [tidy=on|off] [panels=group|private]``: the group's own settings
    (admins change them); in the private chat, the person's own (chat/handlers/pool.py):
    ``/settings watch=off`` turns off the watch link of the pool match being played
    (chat/flow/watch.py), ``/settings reactions=on|off`` their emoji reactions."""
    tr = call.tr
    if call.private:
        if [a.lower() for a in call.args] == ["watch=off"]:  # a pool match's (issue 40)
            await call.answer(await call.flow.watch.turn_off_mine(call.actor))
            return
        await personal_settings(call)
        return
    args = [a.lower() for a in call.args][:3]
    if args:
        if not await call.is_admin():
            await call.say(tr._("Only a chat admin can change the settings."))
            return
        tidy = {"tidy=on": True, "tidy=off": False}.get(args[0])
        panels = {"panels=group": True, "panels=private": False}.get(args[0])
        if tidy is None and panels is None:
            await call.say(tr._("I did not understand that. Try /settings tidy=on, "
                                "/settings tidy=off, /settings panels=group or "
                                "/settings panels=private."))
            return
        if tidy is not None:
            await call.flow.set_tidy(call.chat.id, tidy)
        if panels is not None:
            await call.flow.set_panels_in_group(call.chat.id, panels)
    tidy = await call.flow.is_tidy(call.chat.id)
    in_group = await call.flow.panels_in_group(call.chat.id)
    await call.say("\n".join([
        tr._("Settings of this chat:"),
        tr._("• Keep only the newest board post: {state}.",
             state=tr._("on") if tidy else tr._("off")),
        tr._("• Players' hands and panels: {where}.",
             where=tr._("here in the group, each seen by its player alone") if in_group
             else tr._("in each player's private chat with me")),
        tr._("Admins change them with /settings tidy=on|off and "
             "/settings panels=group|private."),
    ]))


@handler
async def back(call: Call) -> None:
    """``/back``: take the seat back from the computer that played for you."""
    actor = call.actor
    if call.private:
        matches = await call.flow.my_matches(actor.user_id)
    else:
        found = await call.flow.find_match(call.chat.id, call.thread, actor.user_id)
        matches = [found] if found else []
    if not matches:
        await call.say(call.tr._("You are not in a match."))
        return
    await call.answer(await call.flow.ticker.back(actor, matches))


async def match_by_number(call: Call, word: str) -> StoredMatch | None:
    """``/export N``: match N if it was played in this group (privately: by the user)."""
    number = word.lstrip("#")
    stored = None
    if ascii_number(number) and len(number) < 12:
        stored = await call.flow.by_number(int(number))
    if stored is not None and not call.private:
        if stored.row.chat_id != call.chat.id:
            stored = None
    elif stored is not None and stored.row.seat_of(call.actor.user_id) is None:
        stored = None
    if stored is None:
        await call.say(call.tr._("There is no match {number} here: /history lists them.",
                                 number=word[:12]))
    return stored


async def export(call: Call, stored: StoredMatch) -> None:
    """``/export [N]``: the record of the finished tours, then the replay of each of them.

    One GIF per tour rather than one with title frames: each plays from its own start in
    the chat (Telegram cannot seek an animation), is drawn and remembered on its own (a tour
    is drawn once however often it is exported), and stays small. The record and the
    replays name players as the chat does, in its language; the record's ids are opaque."""
    tr, svc = call.tr, call.svc
    finished = sum(1 for t in stored.game.tours if t.is_over)
    data = svc.exports.get((stored.match_id, finished, tr.language))
    if data is None:
        data, finished = await call.flow.export(stored, tr)
        svc.exports.put((stored.match_id, finished, tr.language), data)
    if not finished:
        await call.say(tr._("No tour is finished yet: the record is sent when a tour is over "
                            "(a running tour's record would show the hands)."))
        return
    group = not call.private
    notices = [Send(call.chat.id, tr.n_("The record of {n} finished tour.",
                                        "The record of {n} finished tours.", finished),
                    thread_id=call.thread,
                    document=(f"krendzu-{stored.match_id}.json", data), group=group,
                    info=call.reply_kind("/record"))]
    # Drawn when its turn to be sent comes, once per tour and record while the painter keeps
    # it: twenty /export in a row queue twenty small notices sharing one record. The key
    # names the record by digest: its names and language are what the picture shows.
    digest = hashlib.blake2b(data, digest_size=16).digest()
    texts = picture_texts(tr)
    for tour in range(finished):
        gif = Drawing(draw_replay, (data, tour, texts),
                      key=("replay", stored.match_id, tour, tr.language, digest))
        notices.append(Send(call.chat.id, tr._("Replay of tour {t}.", t=tour + 1),
                            thread_id=call.thread, animation=("replay.gif", gif), group=group,
                            info=call.reply_kind(f"/replay{tour + 1}")))
    await call.inform(notices)
