// The replay page: every step's board comes drawn from Python (packed-data); this script only
// shows them. Keys: arrows step, Home/End first/last, Space play/pause.
"use strict";

(async function replay() {
  const data = pageData();
  const board = document.getElementById("board");
  const slider = document.getElementById("slider");
  const where = document.getElementById("where");
  const playButton = document.getElementById("play");
  const speed = document.getElementById("speed");
  const last = data.moves.length;
  let steps;
  try {
    steps = await unpackData();
  } catch (error) {
    where.textContent = "cannot show the replay: " + error.message;
    return;
  }
  let step = 0;
  let timer = null;
  const buttons = renderMoves(document.getElementById("moves"), data.moves, data.movers, go);
  renderResult(document.getElementById("result"), data.result);

  function show(k) {
    step = Math.max(0, Math.min(last, k));
    setBoard(board, steps.layers[step], steps.spns[step]);
    board.dataset.step = String(step);
    slider.value = String(step);
    where.textContent = step === 0
      ? `start of the game, ${last} moves`
      : `move ${step} of ${last}: ${data.moves[step - 1]} (${data.movers[step - 1]})`;
    markCurrent(buttons, step);
  }

  function pause() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    playButton.classList.remove("playing");
    playButton.setAttribute("aria-label", "play");
  }

  function play() {
    if (step >= last) show(0);
    playButton.classList.add("playing");
    playButton.setAttribute("aria-label", "pause");
    timer = setInterval(() => {
      if (step >= last) pause(); else show(step + 1);
    }, Number(speed.value));
  }

  function toggle() { if (timer === null) play(); else pause(); }

  function go(k) { pause(); show(k); }

  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => go(step - 1));
  document.getElementById("next").addEventListener("click", () => go(step + 1));
  document.getElementById("last").addEventListener("click", () => go(last));
  playButton.addEventListener("click", toggle);
  speed.addEventListener("change", () => { if (timer !== null) { pause(); play(); } });
  slider.addEventListener("input", () => go(Number(slider.value)));
  document.addEventListener("keydown", event => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const keys = {ArrowRight: () => go(step + 1), ArrowLeft: () => go(step - 1),
                  Home: () => go(0), End: () => go(last), " ": toggle};
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
  // Space on a focused button would click it as well on key up: the keydown above handled it.
  document.addEventListener("keyup", event => { if (event.key === " ") event.preventDefault(); });
  show(0);
  board.dataset.ready = "true";
})();
