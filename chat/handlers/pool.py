"""``/playnow [duel]``: the "Play now" pool (issue 40; the logic is chat/flow/pool.py);
``/settings reactions=on|off`` in the private chat, the person's own settings (whether the
emoji reactions of their pool matches reach them: chat/flow/reactions.py); and ``/arena``,
``/swiss``: a group's arena and Swiss league (chat/flow/arenas.py, chat/flow/leagues.py)."""

from __future__ import annotations

from chat.handlers.context import Call, handler


@handler
async def playnow(call: Call) -> None:
    """Join the pool from the private chat, or leave it when already waiting."""
    if not call.private:
        await call.say(call.tr._("Play now works in my private chat: open it and send "
                                 "/playnow."))
        return
    await call.answer(await call.flow.playnow(call.actor, call.args))


@handler
async def arena(call: Call) -> None:
    """``/arena [30m] [timer=60] [deal=12/13] [bots=on] [in=10m]``, ``/arena start|end``,
    ``/arena`` alone: the group's arena post (its table at any time)."""
    if call.private:
        await call.say(call.tr._("Arenas are played by groups: add me to one and send "
                                 "/arena 30m there."))
        return
    words = [w.lower() for w in call.args]
    is_admin = await call.is_admin() if words[:1] in (["start"], ["end"]) else False
    await call.answer(await call.flow.arenas.command(call.chat.id, call.thread, call.actor,
                                                     call.args, is_admin=is_admin))


@handler
async def swiss(call: Call) -> None:
    """``/swiss rounds=5 [days=7] [table=duel]``, ``/swiss start``, ``/swiss`` alone: the
    group's Swiss league (chat/flow/leagues.py)."""
    if call.private:
        await call.say(call.tr._("Swiss leagues are played by groups: add me to one and send "
                                 "/swiss rounds=5 there."))
        return
    is_admin = await call.is_admin() if [w.lower() for w in call.args][:1] == ["start"] \
        else False
    await call.answer(await call.flow.leagues.command(call.chat.id, call.thread, call.actor,
                                                      call.args, is_admin=is_admin))


async def personal_settings(call: Call) -> None:
    """``/settings [reactions=on|off]`` in the private chat: the person's own settings."""
    tr = call.tr
    args = [a.lower() for a in call.args][:1]
    if args:
        wanted = {"reactions=on": True, "reactions=off": False}.get(args[0])
        if wanted is None:
            await call.say(tr._("I did not understand that. Try /settings reactions=on, "
                                "/settings reactions=off or /settings watch=off."))
            return
        await call.answer(await call.flow.reactions.switch(call.actor, wanted))
        return
    on = await call.flow.reactions.are_on(call.actor.user_id)
    await call.say("\n".join([
        tr._("Your settings:"),
        tr._("• Emoji reactions in Play now matches: {state}.",
             state=tr._("on") if on else tr._("off")),
        tr._("Change them with /settings reactions=on|off; /settings watch=off turns off "
             "the watch link of your Play now match; /lang changes the language. A group's "
             "settings are changed in that group."),
    ]))
