// The Krendzu Mini App: draws the match the server describes and sends the steps of a move.
// No library and nothing loaded from elsewhere. Telegram's launch parameters come from
// window.Telegram.WebApp when a client (or a test) provides it, else from the URL fragment
// Telegram opens the page with (#tgWebAppData=...&tgWebAppThemeParams=...).
"use strict";
(function () {
  const API = "/api/app/v1";
  const CELL = 34, BAND = 20;
  const SUITS = { S: "♠", C: "♣", D: "♦", H: "♥" };
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";

  // Telegram ------------------------------------------------------------------------------
  const hash = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  const tg = (window.Telegram && window.Telegram.WebApp) || null;
  const initData = (tg && tg.initData) || hash.get("tgWebAppData") || "";
  const unsafe = (tg && tg.initDataUnsafe) || {};
  const token = query.get("m") || unsafe.start_param || hash.get("tgWebAppStartParam") ||
    new URLSearchParams(initData).get("start_param") || "";

  function postEvent(type, data) {  // Telegram's own script does this; we do not load it
    const body = JSON.stringify({ eventType: type, eventData: data || {} });
    try {
      if (window.TelegramWebviewProxy) window.TelegramWebviewProxy.postEvent(type, JSON.stringify(data || {}));
      else if (window.external && window.external.notify) window.external.notify(body);
      else if (window.parent !== window) window.parent.postMessage(body, "https://web.telegram.org");
    } catch (e) { /* outside Telegram: nothing to tell */ }
  }
  function applyTheme(params) {
    if (!params) return;
    for (const [key, value] of Object.entries(params)) {
      if (typeof value === "string" && /^#[0-9a-fA-F]{3,8}$/.test(value)) {
        document.documentElement.style.setProperty("--tg-theme-" + key.replace(/_/g, "-"), value);
      }
    }
  }
  let theme = tg && tg.themeParams;
  if (!theme && hash.get("tgWebAppThemeParams")) {
    try { theme = JSON.parse(hash.get("tgWebAppThemeParams")); } catch (e) { theme = null; }
  }
  applyTheme(theme);
  if (tg) {
    if (tg.onEvent) tg.onEvent("themeChanged", () => applyTheme(tg.themeParams));
    if (tg.ready) tg.ready();
    if (tg.expand) tg.expand();
  } else {
    postEvent("web_app_ready");
    postEvent("web_app_expand");
  }

  // State ---------------------------------------------------------------------------------
  let T = {};           // the page's words (from the server's catalog)
  let S = null;         // the latest state
  let chosen = null;    // {card, action?, x?, y?, mode: "place"|"discard"}
  let busy = false;
  let hint = null;      // {seq, text, actions}: the suggestion asked for this move
  let resigning = false;  // the Resign question is asked
  let deadline = null;  // performance.now() ms when the turn timer runs out

  const t = (key, values) => (T[key] || key).replace(/\{(\w+)\}/g, (m, k) =>
    values && k in values ? values[k] : m);
  const pretty = (code) => (code[0] === "T" ? "10" : code[0]) + SUITS[code[1]];
  const red = (code) => code[1] === "D" || code[1] === "H";

  async function call(path, options) {
    const init = Object.assign({ headers: {} }, options || {});
    init.headers["X-Telegram-Init-Data"] = initData;
    if (init.body) init.headers["Content-Type"] = "application/json";
    const response = await fetch(API + path, init);
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok) {
      const err = new Error((body && body.message) || response.statusText);
      err.status = response.status;
      err.code = body && body.code;
      throw err;
    }
    return body;
  }

  function showError(message) {
    const box = $("error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  // Drawing -------------------------------------------------------------------------------
  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  function legalPlaces() {
    const out = [];
    for (const a of S.view.tour.legal) {
      const m = /^(\w{2})@(-?\d+),(-?\d+)$/.exec(a);
      if (m) out.push({ action: a, card: m[1], x: +m[2], y: +m[3] });
    }
    return out;
  }

  function drawBoard() {
    const svg = $("board");
    svg.textContent = "";
    const cols = S.columns, rows = S.rows;
    const x0 = cols[0][0], y0 = rows[0][0];
    const width = BAND + cols.length * CELL + 4, height = BAND + rows.length * CELL + 4;
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    svg.setAttribute("aria-label", T.board || "board");
    const px = (x) => BAND + (x - x0) * CELL, py = (y) => BAND + (y - y0) * CELL;
    for (const [x, label] of cols) {
      el("text", { class: "axis", x: px(x) + CELL / 2, y: BAND / 2 }, svg).textContent = label;
    }
    for (const [y, label] of rows) {
      el("text", { class: "axis", x: BAND / 2, y: py(y) + CELL / 2 }, svg).textContent = label;
    }
    const grid = el("g", { class: "grid" }, svg);
    for (let i = 0; i <= cols.length; i++) {
      el("line", { x1: BAND + i * CELL, y1: BAND, x2: BAND + i * CELL, y2: BAND + rows.length * CELL }, grid);
    }
    for (let j = 0; j <= rows.length; j++) {
      el("line", { x1: BAND, y1: BAND + j * CELL, x2: BAND + cols.length * CELL, y2: BAND + j * CELL }, grid);
    }
    const last = new Set(S.last.map(([x, y]) => x + "," + y));
    for (const [, x, y] of S.view.tour.pending) last.add(x + "," + y);
    for (const [code, x, y] of S.view.tour.placements) {
      const g = el("g", { class: "card" + (last.has(x + "," + y) ? " last" : ""),
        "aria-label": pretty(code) + " " + (S.labels[x + "," + y] || "") }, svg);
      el("rect", { class: "face", x: px(x) + 2, y: py(y) + 2, width: CELL - 4, height: CELL - 4, rx: 4 }, g);
      const colour = red(code) ? "red" : "black";
      el("text", { class: "rank " + colour, x: px(x) + 5, y: py(y) + 4 }, g).textContent =
        code[0] === "T" ? "10" : code[0];
      el("text", { class: "suit " + colour, x: px(x) + CELL / 2 + 4, y: py(y) + CELL / 2 + 6 }, g)
        .textContent = SUITS[code[1]];
    }
    for (const combo of S.view.tour.combos) {
      const points = combo.cells.map(([x, y]) => `${px(x) + CELL / 2},${py(y) + CELL / 2}`);
      el("polyline", { class: "combo" + (combo.own_goal ? " own" : ""), points: points.join(" ") }, svg);
    }
    if (chosen && chosen.mode === "place") {
      for (const p of legalPlaces().filter((p) => p.card === chosen.card)) {
        const label = S.labels[p.x + "," + p.y];
        const g = el("g", { class: "target" + (chosen.x === p.x && chosen.y === p.y ? " chosen" : ""),
          tabindex: "0", role: "button", "data-cell": label,
          "aria-label": t("cell", { cell: label }) }, svg);
        el("rect", { x: px(p.x) + 2, y: py(p.y) + 2, width: CELL - 4, height: CELL - 4, rx: 4 }, g);
        el("text", { x: px(p.x) + CELL / 2, y: py(p.y) + CELL / 2 }, g).textContent = label;
        const pick = () => pickCell(p);
        g.addEventListener("click", pick);
        g.addEventListener("keydown", (e) => {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(); }
        });
      }
    }
  }

  function centreBoard(force) {
    const wrap = $("board-wrap");
    if (!force && wrap.dataset.centred) return;
    const cells = S.view.tour.placements;
    if (!cells.length) return;
    const x0 = S.columns[0][0], y0 = S.rows[0][0];
    const cx = cells.reduce((s, c) => s + c[1], 0) / cells.length;
    const cy = cells.reduce((s, c) => s + c[2], 0) / cells.length;
    wrap.scrollLeft = BAND + (cx - x0 + 0.5) * CELL - wrap.clientWidth / 2;
    wrap.scrollTop = BAND + (cy - y0 + 0.5) * CELL - wrap.clientHeight / 2;
    wrap.dataset.centred = "1";
  }

  function drawHeader() {
    $("tour").textContent = S.lines.tour;
    $("score").textContent = S.lines.score;
    const prompt = $("prompt");
    // The next step in words: the server's ("your move: choose a card"), or, once a card is
    // chosen, what to tap next.
    prompt.textContent = !chosen ? S.lines.prompt
      : chosen.mode === "discard" ? t("discardConfirm", { card: pretty(chosen.card) })
      : chosen.action ? t("confirm", { card: pretty(chosen.card), cell: S.labels[chosen.x + "," + chosen.y] })
      : t("pickCell", { card: pretty(chosen.card) });
    prompt.classList.toggle("mine", S.myTurn);
    const shown = hint && hint.seq === S.seq ? hint.text : "";
    $("hint").textContent = shown;
    $("hint").hidden = !shown;
    // What happened lately in words: who played what, and each line scored (+1, the line).
    const recent = $("recent");
    recent.textContent = "";
    recent.setAttribute("aria-label", T.recent || "");
    for (const line of S.recent || []) {
      const li = document.createElement("li");
      li.textContent = line.text;
      if (line.scored) li.className = "scored";
      recent.appendChild(li);
    }
    const list = $("players");
    list.textContent = "";
    const tour = S.view.tour;
    S.seats.forEach((one, seat) => {
      const li = document.createElement("li");
      if (!S.over && tour.current_player === seat) li.className = "turn";
      li.textContent = one.name + " ";
      const about = document.createElement("span");
      about.className = "role";
      about.textContent = `${one.role} · ${one.cards}`;
      li.appendChild(about);
      list.appendChild(li);
    });
  }

  function button(label, onClick, primary) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    if (primary) b.className = primary === true ? "primary" : primary;
    b.disabled = busy;
    b.addEventListener("click", onClick);
    return b;
  }

  function drawActions() {
    const box = $("actions");
    box.textContent = "";
    if (!S.myTurn) return;
    const legal = S.view.tour.legal;
    // The question itself is the prompt's ("Exchange 10♠?", "Play Q♣ at M12?"): asked
    // once, answered here.
    if (chosen && chosen.mode === "discard") {
      box.append(button(t("discardYes"), () => send(["drop:" + chosen.card]), true),
        button(t("cancel"), cancel));
      return;
    }
    if (chosen && chosen.mode === "place" && chosen.action) {
      if (S.pair) {
        box.append(button(t("playEnd"), () => send([chosen.action, "end"]), true),
          button(t("playTwo"), () => send([chosen.action])));
      } else {
        box.appendChild(button(t("play"), () => send([chosen.action]), true));
      }
      box.appendChild(button(t("cancel"), cancel));
      return;
    }
    if (chosen) {
      box.append(button(t("cancel"), cancel));
      return;
    }
    // How many cards to exchange: every answer alike, none offered as the default.
    for (const a of legal) {
      const m = /^ann:(\d+)$/.exec(a);
      if (m && m[1] !== "0") box.appendChild(button(t("swap", { n: m[1] }), () => send([a])));
    }
    if (legal.includes("ann:0")) box.appendChild(button(t("keep"), () => send(["ann:0"])));
    if (legal.includes("end")) box.appendChild(button(t("endTurn"), () => send(["end"])));
    if (legal.includes("pass")) box.appendChild(button(t("pass"), () => send(["pass"])));
  }

  function drawHand() {
    const wrap = $("hand-wrap");
    const hand = S.view.tour.hand;
    wrap.hidden = S.seat === null || !hand.length;
    $("hand-title").textContent = T.hand || "";
    const box = $("hand");
    box.textContent = "";
    box.setAttribute("aria-label", T.hand || "");
    const places = legalPlaces();
    const discards = S.view.tour.legal.filter((a) => a.startsWith("drop:")).map((a) => a.slice(5));
    for (const code of hand) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "card " + (red(code) ? "red" : "black");
      b.dataset.card = code;
      b.setAttribute("aria-label", pretty(code));
      b.setAttribute("aria-pressed", chosen && chosen.card === code ? "true" : "false");
      const r = document.createElement("span"); r.className = "r";
      r.textContent = code[0] === "T" ? "10" : code[0];
      const s = document.createElement("span"); s.className = "s"; s.textContent = SUITS[code[1]];
      b.append(r, s);
      const playable = places.some((p) => p.card === code) || discards.includes(code);
      b.disabled = busy || !S.myTurn || !playable;
      b.addEventListener("click", () => pickCard(code, discards.includes(code) ? "discard" : "place"));
      box.appendChild(b);
    }
  }

  // The bot's /hint and /resign: Hint on the player's own turn, Resign (asked first) while
  // they play.
  function drawTools() {
    const box = $("tools");
    box.textContent = "";
    if (!S.canResign) resigning = false;
    box.hidden = !S.canHint && !S.canResign;
    if (resigning) {
      const q = document.createElement("div");
      q.className = "question";
      q.textContent = t("resignConfirm");
      box.append(q, button(t("resignYes"), resign, "danger"),
        button(t("cancel"), () => { resigning = false; render(); }));
      return;
    }
    if (S.canHint) {
      const b = button(t("hint"), askHint);
      b.id = "hint-button";
      box.appendChild(b);
    }
    if (S.canResign) {
      const b = button(t("resign"), () => { resigning = true; render(); });
      b.id = "resign-button";
      box.appendChild(b);
    }
  }

  function render() {
    document.documentElement.lang = S.language;
    drawHeader();
    drawBoard();
    drawActions();
    drawHand();
    drawTools();
    centreBoard(false);
    $("help").hidden = S.seat === null || S.over;  // how to play: for players only
    $("app").setAttribute("aria-busy", "false");
    $("app").dataset.seq = S.seq;
  }

  // Choosing ------------------------------------------------------------------------------
  function pickCard(code, mode) {
    chosen = chosen && chosen.card === code && !chosen.action ? null : { card: code, mode: mode };
    showError("");
    render();
    if (chosen && mode === "place") {
      const first = $("board").querySelector(".target");
      if (first) {  // keyboard users go on from the first legal cell (Tab for the next)
        first.scrollIntoView({ block: "nearest", inline: "nearest" });
        first.focus({ preventScroll: true });
      }
    }
  }
  function pickCell(p) {
    chosen = { card: p.card, mode: "place", action: p.action, x: p.x, y: p.y };
    render();
    const yes = $("actions").querySelector("button.primary");
    if (yes) yes.focus();
  }
  function cancel() {
    chosen = null;
    render();
  }
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && chosen) cancel(); });

  function setState(next) {
    const moved = !S || next.seq !== S.seq || next.status !== S.status;
    S = next;
    if (moved) { chosen = null; resigning = false; }
    deadline = S.secondsLeft == null ? null : performance.now() + S.secondsLeft * 1000;
    tick();
    render();
  }

  async function send(actions) {
    if (busy) return;
    busy = true;
    render();
    try {
      const answer = await call(`/match/${encodeURIComponent(token)}/move`,
        { method: "POST", body: JSON.stringify({ seq: S.seq, actions: actions }) });
      busy = false;
      showError("");
      setState(answer.state);
    } catch (err) {
      busy = false;
      chosen = null;
      showError(err.message);
      try { setState(await call(`/match/${encodeURIComponent(token)}`)); } catch (e) { render(); }
    }
  }

  async function askHint() {
    if (busy) return;
    busy = true;
    render();
    try {
      const answer = await call(`/match/${encodeURIComponent(token)}/hint`,
        { method: "POST", body: JSON.stringify({ seq: S.seq }) });
      busy = false;
      showError("");
      hint = { seq: answer.seq, text: answer.text, actions: answer.actions };
      // Its first card lifted at its cell, waiting for the confirmation.
      const first = /^(\w{2})@(-?\d+),(-?\d+)$/.exec(answer.actions[0] || "");
      const drop = /^drop:(\w{2})$/.exec(answer.actions[0] || "");
      if (answer.seq === S.seq && first) {
        chosen = { card: first[1], mode: "place", action: answer.actions[0], x: +first[2], y: +first[3] };
      } else if (answer.seq === S.seq && drop) {
        chosen = { card: drop[1], mode: "discard" };
      }
      render();
    } catch (err) {
      busy = false;
      showError(err.message);
      render();
    }
  }

  async function resign() {
    if (busy) return;
    busy = true;
    resigning = false;
    render();
    try {
      const answer = await call(`/match/${encodeURIComponent(token)}/resign`,
        { method: "POST", body: "{}" });
      busy = false;
      showError("");
      setState(answer.state);
    } catch (err) {
      busy = false;
      showError(err.message);
      try { setState(await call(`/match/${encodeURIComponent(token)}`)); } catch (e) { render(); }
    }
  }

  // An error the page cannot go on from (not opened from Telegram, too old, a link that
  // names no match): only the message and what to do, no empty board or "tap a card".
  function fatal(message, next) {
    for (const id of ["top", "prompt", "hint", "recent", "board-wrap", "actions", "hand-wrap",
      "tools", "error", "help"]) $(id).hidden = true;
    $("fatal-message").textContent = message;
    $("fatal-next").textContent = next || "";
    $("fatal").hidden = false;
    $("app").setAttribute("aria-busy", "false");
    $("app").dataset.error = "1";
  }

  // The clock and following others' moves -------------------------------------------------
  function tick() {
    const clock = $("clock");
    if (deadline === null || !S || S.over) { clock.textContent = ""; return; }
    const left = Math.max(0, Math.round((deadline - performance.now()) / 1000));
    clock.textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    clock.classList.toggle("low", left <= 10);
  }
  setInterval(tick, 1000);

  async function follow() {
    for (;;) {
      if (S && S.over) return;
      try {
        const next = await call(`/match/${encodeURIComponent(token)}?after=${S ? S.seq : 0}`);
        if ($("error").dataset.offline) { showError(""); delete $("error").dataset.offline; }
        if (!busy && (next.seq !== S.seq || next.status !== S.status ||
            next.secondsLeft !== null && Math.abs((next.secondsLeft * 1000 + performance.now()) - (deadline || 0)) > 3000)) {
          setState(next);
        }
      } catch (err) {
        // Expired, the match gone, or its players turned the watch link off meanwhile.
        if (err.status === 401 || err.status === 404 || err.code === "watch_off") {
          fatal(err.message, err.status === 404 ? T.unknownNext : "");
          return;
        }
        showError(T.offline || "…");
        $("error").dataset.offline = "1";
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }

  async function start() {
    if (!initData) {
      fatal("Open this page with the ▶ Play button in Telegram.",
        "Откройте эту страницу кнопкой ▶ Играть в Telegram.");
      return;
    }
    try {
      const texts = await call("/texts");
      T = texts.texts;
      document.title = T.title;
      document.documentElement.lang = texts.language;
      $("help").textContent = T.help;
      if (!token) { fatal(T.noInit); return; }
      setState(await call(`/match/${encodeURIComponent(token)}`));
      centreBoard(true);
    } catch (err) {
      fatal(err.message, err.status === 404 ? T.unknownNext : "");
      return;
    }
    follow();
  }
  start();
})();
