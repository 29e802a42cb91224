// The floor's one script: live updates from /events (server-sent events). It writes every
// value with textContent, never as HTML, so a model's answer or a market's question shows as
// text whatever it holds. Without it the pages still work; they only do not update by themselves.
"use strict";
(function () {
  const CELL_CHARS = 80;
  const live = document.getElementById("live");
  const rows = document.getElementById("rows");
  const body = rows ? rows.querySelector("tbody") : null;
  const total = document.getElementById("total");

  function setStatus(s) {
    const put = (k, v) => {
      const el = document.querySelector('[data-k="' + k + '"]');
      if (el) el.textContent = v;
    };
    put("head", String(s.head));
    put("confirmed", s.confirmed + " (" + s.confirmations + " conf.)");
    put("decisions", String(s.decisions));
    put("open_positions", String(s.open_positions));
    if (s.last_decision_time) put("last_decision", utc(s.last_decision_time));
  }

  function utc(t) {
    return new Date(t * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  }

  function cut(s, n) {
    const chars = Array.from(s);
    return chars.length <= n ? s : chars.slice(0, n).join("") + "… (" + new TextEncoder().encode(s).length + " bytes)";
  }

  // Whether the decision passes the filter the page was rendered with.
  function keeps(d) {
    const f = rows.dataset;
    return (!f.reason || Number(f.reason) === d.reason) &&
      (!f.verdict || f.verdict === d.verdict) &&
      (!f.market || f.market.toLowerCase() === d.market.toLowerCase()) &&
      (!f.model || f.model === d.model) &&
      (!f.scenario || f.scenario === d.scenario);
  }

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }

  function addRow(d) {
    if (!body || rows.dataset.live !== "true" || !keeps(d)) return;
    const tr = document.createElement("tr");
    tr.className = "new";
    tr.dataset.block = String(d.block);
    const t = cell(tr, "");
    const a = document.createElement("a");
    a.href = "/decision/" + d.block + "/" + d.log_index;
    a.textContent = utc(d.time);
    t.appendChild(a);
    cell(tr, d.market + (d.question ? " · " + cut(d.question, CELL_CHARS) : ""));
    cell(tr, d.raw === null ? "(" + d.raw_length + " bytes, not in the record)" : cut(JSON.stringify(d.raw).slice(1, -1), CELL_CHARS), "raw");
    cell(tr, d.verdict);
    cell(tr, d.reason + " · " + d.label + (d.failed_labels.length ? " · fails: " + d.failed_labels.join("; ") : ""));
    cell(tr, d.limit ? "limit " + d.limit + (d.average_price ? " · paid " + d.average_price : "") : "");
    cell(tr, d.side && d.quantity !== "0" ? d.quantity + " " + d.side + " · cost ≤ " + d.cost_shown + " · filled " + d.filled + " for " + d.spent_shown : "");
    cell(tr, d.filled !== "0" ? "open" : "");
    cell(tr, d.model || "");
    body.insertBefore(tr, body.firstChild);
    const per = Number(rows.dataset.perPage || "50");
    while (body.children.length > per) body.removeChild(body.lastChild);
    if (total) total.textContent = String(Number(total.textContent) + 1);
  }

  if (!window.EventSource) return;
  const es = new EventSource("/events");
  es.addEventListener("open", () => { if (live) live.textContent = "on"; });
  es.addEventListener("error", () => { if (live) live.textContent = "reconnecting"; });
  es.addEventListener("head", (e) => setStatus(JSON.parse(e.data)));
  es.addEventListener("decision", (e) => addRow(JSON.parse(e.data)));
  es.addEventListener("settled", (e) => {
    const d = JSON.parse(e.data);
    document.body.dataset.settled = String(Number(document.body.dataset.settled || "0") + 1);
    if (!body) return;
    for (const tr of body.querySelectorAll('tr[data-block="' + d.block + '"]')) tr.classList.add("settled");
  });
})();
