"""``/admin``: the owners' commands (``KRENDZU_ADMIN_IDS``), in the private chat only.

- ``/admin``: the figures at a glance (people and chats known, matches started today, what
  is open now, the announcements waiting, this process's errors in the last hour);
- ``/admin notice TEXT``: a maintenance notice to every chat with a match being played,
  sent through delivery like any message, so within Telegram's flood limits;
- ``/admin pause`` and ``/admin resume``: new matches refused politely (a switch in the
  store, read by every process), running ones finish.

Anyone else, and an owner in a group, is told in one line that the command is the
operators' (in a group, where the figures and the switches are nobody else's business, the
owner is pointed to the private chat); nothing is changed or shown.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from chat.handlers.context import Call, handler
from chat.notices import Send

#: Telegram's limit on a message's text is 4,096 characters; the notice gets its mark too.
NOTICE_LIMIT = 3500


@handler
async def admin(call: Call) -> None:
    tr = call.tr
    if call.actor.user_id not in call.svc.admin_ids:
        await call.say(tr._("/admin is for the bot's operators."))
        return
    if not call.private:
        await call.say(tr._("/admin works in my private chat only."))
        return
    word = call.args[0].lower() if call.args else ""
    if word == "":
        await call.say(await figures(call))
    elif word == "notice":
        await notice(call)
    elif word in ("pause", "resume"):
        await call.flow.set_paused(word == "pause")
        await call.say(tr._("New matches are refused until /admin resume: the ones being "
                            "played go on.") if word == "pause"
                       else tr._("New matches may start again."))
    else:
        await call.say(usage(call))


def usage(call: Call) -> str:
    return call.tr._("/admin — the figures; /admin notice TEXT — a notice to every chat with "
                     "a match being played; /admin pause and /admin resume — refuse new "
                     "matches for maintenance, and allow them again.")


async def figures(call: Call) -> str:
    tr = call.tr
    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    found = await call.flow.operator_figures(midnight.timestamp())
    now = found.now
    oldest = ("—" if now.oldest_unannounced is None
              else f"{max(0.0, time.time() - now.oldest_unannounced):.0f} s")
    errors = call.svc.errors.count() if call.svc.errors is not None else 0
    paused = await call.flow.paused()
    lines = [
        tr._("People: {n}", n=found.users),
        tr._("Chats: {n}", n=found.chats),
        tr._("Matches started today (UTC): {n}", n=found.started),
        tr._("Being played now: {n}; set-ups waiting for players: {m}",
             n=now.active_matches, m=now.open_lobbies),
        tr._("Moves waiting to be announced: {n} (the oldest: {age})",
             n=now.unannounced_moves, age=oldest),
        tr._("Errors in the last hour (this process): {n}", n=errors),
        tr._("New matches: refused (paused)") if paused else tr._("New matches: allowed"),
    ]
    return "\n".join(lines) + "\n\n" + usage(call)


async def notice(call: Call) -> None:
    tr = call.tr
    message = call.update.effective_message
    text = (message.text or "") if message is not None else ""
    # Everything after "/admin notice", as typed (line breaks kept).
    parts = text.split(maxsplit=2)
    body = parts[2].strip() if len(parts) > 2 else ""
    if not body:
        await call.say(tr._("Write the notice after the command: /admin notice TEXT."))
        return
    if len(body) > NOTICE_LIMIT:
        await call.say(tr._("The notice is too long: {n} characters at most.",
                            n=NOTICE_LIMIT))
        return
    chats = await call.flow.running_chats()
    call.deliver([Send(chat_id, "🔧 " + body, thread_id=thread_id, group=chat_id < 0)
                  for chat_id, thread_id in chats])
    await call.say(tr.n_("The notice goes to {n} chat with a match being played.",
                         "The notice goes to {n} chats with a match being played.",
                         len(chats)))
