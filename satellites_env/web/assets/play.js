// The play page: every board and every legal move comes from the server (the engine); this
// script shows them, turns clicks into move requests and shows the engine's answer.
"use strict";

(function playPage() {
  const data = pageData();
  const board = document.getElementById("board");
  const svg = board.querySelector("svg");
  const hints = svg.querySelector("g.hints");
  const statusLine = document.getElementById("status");
  const messageBox = document.getElementById("message");
  const passButton = document.getElementById("pass");
  const download = document.getElementById("download");
  const colorChoice = document.getElementById("color");
  const movesList = document.getElementById("moves");
  const resultBox = document.getElementById("result");
  const SVG_NS = "http://www.w3.org/2000/svg";
  let state = null;      // the server's answer for this game
  let selected = null;   // the square of the satellite chosen to move
  let choosing = null;   // a displacement waiting for its push: {action, move, pushes}
  let busy = false;
  let version = 0;

  class ApiError extends Error {
    constructor(message, status) { super(message); this.status = status; }
  }

  async function api(method, path, body) {
    const options = {method, headers: {"Content-Type": "application/json"}};
    if (body !== undefined) options.body = JSON.stringify(body);
    const response = await fetch(path, options);
    let answer;
    try { answer = await response.json(); } catch (error) { answer = {}; }
    if (!response.ok) {
      throw new ApiError(answer.error || `the server answered ${response.status}`, response.status);
    }
    return answer;
  }

  function bump() { version += 1; board.dataset.version = String(version); }

  function setBusy(value) {
    busy = value;
    board.dataset.busy = String(value);
    document.body.classList.toggle("busy", value);
  }

  function say(text, kind) {
    messageBox.textContent = text || "";
    messageBox.className = "message " + (kind || "info");
    bump();
  }

  // ---------------------------------------------------------------- hints (UI only)

  function box(square) {
    const hit = svg.querySelector(`rect.hit[data-sq="${square}"]`);
    return {x: Number(hit.getAttribute("x")), y: Number(hit.getAttribute("y")),
            size: Number(hit.getAttribute("width"))};
  }

  function shape(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    hints.append(node);
  }

  function clearHints() { hints.replaceChildren(); }

  function showTargets(square) {
    clearHints();
    const b = box(square);
    shape("rect", {class: "sel", x: b.x + 3, y: b.y + 3, width: b.size - 6, height: b.size - 6,
                   rx: 6, "data-sq": square});
    for (const target of state.legal[square]) {
      const t = box(target.to);
      const cx = t.x + t.size / 2, cy = t.y + t.size / 2;
      if (target.displacement) {
        shape("circle", {class: "ring-target", cx, cy, r: t.size * 0.42, "data-sq": target.to});
      } else {
        shape("circle", {class: "dot-target", cx, cy, r: t.size * 0.14, "data-sq": target.to});
      }
    }
  }

  // ---------------------------------------------------------------- state

  function describeTurn() {
    if (state.over) return "game over";
    if (state.your_turn) return `your move (you are ${state.you})`;
    return `${state.opponent} is thinking\u2026`;
  }

  function show(next) {
    state = next;
    selected = null;
    choosing = null;
    clearHints();
    setBoard(board, state.layer, state.spn);
    delete board.dataset.pending;
    board.dataset.game = state.id;
    board.dataset.you = state.you;
    board.dataset.turn = state.turn;
    board.dataset.over = String(state.over);
    statusLine.replaceChildren(colorDot(state.you), describeTurn());
    passButton.disabled = state.pass_action === null;
    download.href = `/api/games/${state.id}/record`;
    download.setAttribute("download", `satellites-${state.id}.json`);
    const buttons = renderMoves(movesList, state.moves, state.movers, () => {});
    markCurrent(buttons, state.moves.length);
    renderResult(resultBox, state.result);
    bump();
  }

  function replyText() {
    if (!state.reply.length) return "";
    return `${state.opponent} played ${state.reply.join(", ")}`;
  }

  async function run(work) {
    if (busy) return;
    setBusy(true);
    try { await work(); } finally { setBusy(false); bump(); }
  }

  async function newGame(color, spn) {
    const body = {color};
    if (spn) body.spn = spn;
    const next = await api("POST", "/api/games", body);
    history.replaceState(null, "", `?game=${encodeURIComponent(next.id)}`);
    show(next);
    say(replyText() || (state.pass_action !== null ? "no legal move: pass (R19)" : ""));
  }

  async function submit(request) {
    try {
      show(await api("POST", `/api/games/${state.id}/move`, request));
      const notes = [replyText()];
      if (state.pass_action !== null) notes.push("you have no legal move: pass (R19)");
      say(notes.filter(Boolean).join(" \u00b7 "));
    } catch (error) {
      cancelChoice();
      say(`not played: ${error.message}`, "error");
    }
  }

  function cancelChoice() {
    if (choosing) setBoard(board, state.layer, state.spn);
    delete board.dataset.pending;
    choosing = null;
    selected = null;
    clearHints();
  }

  async function choosePush(target) {
    const answer = await api("GET",
      `/api/games/${state.id}/preview?action=${encodeURIComponent(target.action)}`);
    clearHints();
    choosing = {action: target.action, move: answer.move, pushes: answer.pushes};
    board.querySelector("g.layer").innerHTML = answer.layer;  // the push cells, in orange
    board.dataset.pending = answer.move;
    say(`${answer.move}: choose an orange cell for the push (Esc cancels)`);
  }

  // ---------------------------------------------------------------- clicks

  function pieceAt(square) {
    const sat = board.querySelector(`g.layer use.sat[data-sq="${square}"]`);
    return sat ? sat.dataset.piece : null;
  }

  async function onSquare(square) {
    if (!state) return;
    if (state.over) { say("the game is over: start a new game", "error"); return; }
    if (!state.your_turn) { say(`it is ${state.turn}'s turn`, "error"); return; }
    if (choosing) {
      const push = choosing.pushes.find(p => p.to === square);
      if (push) { await submit({actions: [choosing.action, push.action]}); return; }
      cancelChoice();
      say("displacement cancelled");
      return;
    }
    if (selected && square === selected) { selected = null; clearHints(); say(""); return; }
    if (state.legal[square]) {
      selected = square;
      showTargets(square);
      const n = state.legal[square].length;
      say(`${square}: ${n} legal move${n === 1 ? "" : "s"}`);
      return;
    }
    if (selected) {
      const target = state.legal[selected].find(t => t.to === square);
      if (target && target.displacement) { await choosePush(target); return; }
      if (target) { await submit({action: target.action}); return; }
      await submit({move: `${selected}-${square}`});  // the engine says why it is not legal
      return;
    }
    const piece = pieceAt(square);
    const mine = piece && (piece[0] === "R") === (state.you === "red");
    if (state.pass_action !== null) say("you have no legal move: pass (R19)", "error");
    else if (mine) say(`${square}: this satellite has no legal move`, "error");
    else say(`choose one of your (${state.you}) satellites first`, "error");
  }

  svg.querySelector("g.hits").addEventListener("click", event => {
    const square = event.target.dataset && event.target.dataset.sq;
    if (square) run(() => onSquare(square));
  });
  passButton.addEventListener("click", () => run(async () => {
    if (state && state.pass_action !== null) await submit({action: state.pass_action});
  }));
  document.getElementById("new").addEventListener("click", () => run(async () => {
    try { await newGame(colorChoice.value); } catch (error) { say(error.message, "error"); }
  }));
  document.addEventListener("keydown", event => {
    if (event.key === "Escape" && (selected || choosing)) { cancelChoice(); say(""); }
  });

  run(async () => {
    const params = new URLSearchParams(location.search);
    const id = params.get("game");
    try {
      if (id) {
        try {
          show(await api("GET", `/api/games/${encodeURIComponent(id)}`));
          say(replyText());
          colorChoice.value = state.you;
          return;
        } catch (error) {
          if (error.status !== 404) throw error;
          say(error.message, "error");
        }
      }
      const color = params.get("color") === "blue" ? "blue" : "red";
      colorChoice.value = color;
      await newGame(color, params.get("spn"));
    } catch (error) {
      statusLine.textContent = "no game";
      say(error.message, "error");
    }
  });
})();
