// drover dashboard: live updates over /api/v1/events/stream, countdowns,
// and operator actions through the JSON API. No framework, no build step.
(function () {
  "use strict";
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  function fmt(sec) {
    sec = Math.max(0, Math.round(sec));
    if (sec < 60) return sec + "s";
    if (sec < 3600) return Math.floor(sec / 60) + "m" + String(sec % 60).padStart(2, "0") + "s";
    if (sec < 172800) return Math.floor(sec / 3600) + "h" + String(Math.floor(sec / 60) % 60).padStart(2, "0") + "m";
    return Math.floor(sec / 86400) + "d" + (Math.floor(sec / 3600) % 24) + "h";
  }

  // Countdowns (data-due) and elapsed timers (data-since), every second.
  function tick() {
    const now = Date.now();
    document.querySelectorAll("[data-due]").forEach((el) => {
      const left = (Date.parse(el.dataset.due) - now) / 1000;
      el.textContent = left <= 0 ? "due now" : fmt(left);
      el.classList.toggle("due", left <= 0);
    });
    document.querySelectorAll("[data-since]").forEach((el) => {
      el.textContent = fmt((now - Date.parse(el.dataset.since)) / 1000);
    });
  }

  // CSP forbids inline styles; bars carry their width in style-width.
  function bars(root) {
    root.querySelectorAll("[style-width]").forEach((el) => { el.style.width = el.getAttribute("style-width") + "%"; });
  }

  function flash(msg, ok) {
    const f = document.getElementById("flash");
    if (!f) return;
    f.textContent = msg;
    f.className = "flash " + (ok ? "ok" : "err");
    f.hidden = false;
    clearTimeout(flash.t);
    flash.t = setTimeout(() => { f.hidden = true; }, ok ? 2500 : 8000);
  }

  // What the operator is typing survives a live refresh.
  function keep(root) {
    const vals = {};
    root.querySelectorAll("textarea[id], input[id]").forEach((el) => { if (el.value) vals[el.id] = el.value; });
    const a = document.activeElement;
    return { vals: vals, focus: a && root.contains(a) ? a.id : "" };
  }
  function restore(k) {
    Object.keys(k.vals).forEach((id) => { const el = document.getElementById(id); if (el) el.value = k.vals[id]; });
    if (k.focus) { const el = document.getElementById(k.focus); if (el) el.focus(); }
  }

  // The board says when its columns overflow (it scrolls sideways).
  function overflow() {
    const b = document.getElementById("board");
    if (b) b.parentElement.classList.toggle("overflows", b.scrollWidth > b.clientWidth + 1);
  }

  // Copy buttons: the clipboard where the browser allows it, else the
  // command is selected for the operator's own copy.
  async function copy(b) {
    const code = b.parentElement.querySelector("code");
    try { await navigator.clipboard.writeText(b.dataset.copy); flash("copied: " + b.dataset.copy, true); return; }
    catch (e) { /* not a secure context: select it instead */ }
    if (code) { const r = document.createRange(); r.selectNodeContents(code); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }
    flash("selected: press Ctrl+C to copy", true);
  }

  // Re-render the live region from the server (?fragment=1).
  let pending = false, last = 0;
  async function refresh() {
    const live = document.getElementById("live");
    if (!live) return;
    const since = Date.now() - last;
    if (pending) return;
    if (since < 500) { pending = true; setTimeout(() => { pending = false; refresh(); }, 500 - since); return; }
    last = Date.now();
    const u = new URL(live.dataset.live || location.pathname, location.href);
    new URLSearchParams(location.search).forEach((v, k) => u.searchParams.set(k, v));
    u.searchParams.set("fragment", "1");
    try {
      const r = await fetch(u, { credentials: "same-origin" });
      if (!r.ok) return;
      const kept = keep(live);
      live.innerHTML = await r.text();
      restore(kept);
      bars(live);
      overflow();
      tick();
      document.dispatchEvent(new CustomEvent("drover:updated"));
    } catch (e) { /* the stream reconnects; the next event refreshes */ }
  }

  function connect() {
    const dot = document.getElementById("live-dot");
    const es = new EventSource("/api/v1/events/stream");
    es.onopen = () => { if (dot) { dot.textContent = "live"; dot.className = "live-dot on"; } };
    es.onerror = () => { if (dot) { dot.textContent = "reconnecting…"; dot.className = "live-dot off"; } };
    es.onmessage = refresh;
    es.addEventListener("change", refresh);
  }

  async function call(url, body) {
    const r = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify(body || {}),
    });
    let data = null;
    try { data = await r.json(); } catch (e) { /* empty */ }
    if (!r.ok) throw new Error((data && data.error && data.error.message) || r.status + " " + r.statusText);
    return data;
  }

  // Buttons with data-action POST {} to it; forms with data-action POST
  // their one field (data-field) to it.
  document.addEventListener("click", async (ev) => {
    const c = ev.target.closest("button[data-copy]");
    if (c) { ev.preventDefault(); copy(c); return; }
    const b = ev.target.closest("button[data-action]");
    if (!b) return;
    ev.preventDefault();
    if (b.dataset.confirm && !confirm(b.dataset.confirm)) return;
    b.disabled = true;
    // An option button answers with its option.
    const body = b.dataset.answer !== undefined ? { text: b.dataset.answer } : {};
    try { await call(b.dataset.action, body); flash(b.textContent.trim() + ": done", true); refresh(); }
    catch (e) { flash(e.message, false); }
    finally { b.disabled = false; }
  });
  document.addEventListener("submit", async (ev) => {
    const f = ev.target.closest("form[data-action]");
    if (!f) return;
    ev.preventDefault();
    const field = f.dataset.field, input = f.elements[field];
    const body = {}; body[field] = input.value;
    try { await call(f.dataset.action, body); flash("saved", true); if (input.tagName !== "SELECT") input.value = ""; refresh(); }
    catch (e) { flash(e.message, false); }
  });

  // Run page: tail the log while the run is open.
  async function tail() {
    const pre = document.getElementById("log");
    if (!pre) return;
    try {
      const r = await fetch(pre.dataset.log + "?offset=-65536&limit=65536", { credentials: "same-origin" });
      if (r.ok) {
        const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        pre.textContent = await r.text() || "(empty)";
        if (atBottom) pre.scrollTop = pre.scrollHeight;
      } else {
        const d = await r.json().catch(() => null);
        pre.textContent = (d && d.error && d.error.message) || "no log";
      }
    } catch (e) { /* retry */ }
    if (pre.dataset.open === "1") setTimeout(tail, 2000);
  }

  document.addEventListener("DOMContentLoaded", () => {
    bars(document);
    overflow();
    window.addEventListener("resize", overflow);
    tick();
    setInterval(tick, 1000);
    connect();
    tail();
  });
})();
