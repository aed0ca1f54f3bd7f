// Shared by the replay and the play page: page data, the board, the move list, the result.
"use strict";

function pageData() {
  return JSON.parse(document.getElementById("page-data").textContent);
}

// The per-step data packed by satellites_env/web/pages.py (gzip + base64).
async function unpackData() {
  const text = document.getElementById("packed-data").textContent.trim();
  if (typeof DecompressionStream === "undefined") {
    throw new Error("this browser cannot unpack the replay (it has no DecompressionStream); " +
                    "open it in a current Chrome, Firefox, Safari or Edge");
  }
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

// Show one position: its SVG layer (drawn by satellites_env.render.svg) and its SPN.
function setBoard(board, layer, spn) {
  board.querySelector("g.layer").innerHTML = layer;
  if (spn) board.dataset.spn = spn; else delete board.dataset.spn;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

function colorDot(color) {
  return el("span", {class: "dot " + (color || "none")});
}

// The move list: one button per move; onPick(k) gets the step after move k (1..n).
function renderMoves(list, moves, movers, onPick) {
  list.replaceChildren();
  return moves.map((move, i) => {
    const button = el("button", {"data-step": i + 1, title: `${movers[i]}: ${move}`,
                                 onclick: () => onPick(i + 1)},
                      el("span", {class: "n"}, `${i + 1}.`), colorDot(movers[i]), " ", move);
    list.append(el("li", {}, button));
    return button;
  });
}

function markCurrent(buttons, step) {
  buttons.forEach((button, i) => {
    const current = i + 1 === step;
    button.classList.toggle("current", current);
    if (current) button.scrollIntoView({block: "nearest"});
  });
}

// The result box: headline, how the game ended, and every colony with its part in it.
function renderResult(box, result) {
  box.replaceChildren();
  if (!result) return;
  box.append(el("div", {class: "headline"}, colorDot(result.winner), result.headline),
             el("div", {class: "how"}, result.how),
             el("div", {class: "how"}, result.reason));
  if (!result.colonies.length) return;
  const rows = result.colonies.map(c => el("tr", {},
    el("td", {}, colorDot(c.controller), c.controller || "tied"),
    el("td", {}, c.squares, c.crowned ? el("span", {class: "crown", title: "crowned"}, " \u265B")
                                      : null),
    el("td", {}, `${c.red_sum} : ${c.blue_sum}`),
    el("td", {}, c.note)));
  box.append(el("table", {class: "colonies"},
    el("thead", {}, el("tr", {}, el("th", {}, "control"), el("th", {}, "squares"),
                       el("th", {}, "red : blue"), el("th", {}, "in the result"))),
    el("tbody", {}, ...rows)));
}
