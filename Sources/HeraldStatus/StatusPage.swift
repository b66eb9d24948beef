import Foundation

/// `GET /`: the status page, one self-contained HTML document (no external scripts, fonts,
/// styles or images). It reads `/status` for the tables and `/events` (Server-Sent Events) for
/// live updates: the loaders (state, last run, result, next run, new items), a chart of events
/// per second per topic over the last five minutes (SVG, drawn in the page from the stream, so
/// it starts when the page opens; at most 64 topics followed, later ones counted as `(other)`),
/// the latest events, and each post scheduler's outbox.
enum StatusPage {
    static let html = Data(source.utf8)

    private static let source = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>herald status</title>
    <style>
      :root { color-scheme: light dark; --muted: #777; --line: #8884; --ok: #2a8a3a; --bad: #c0392b; --warn: #b9770e; }
      body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; max-width: 72rem; }
      h1 { font-size: 1.3rem; margin: 0 0 .25rem; } h2 { font-size: 1rem; margin: 1.5rem 0 .5rem; }
      #summary { color: var(--muted); }
      table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); }
      th { font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
      .finished, .ready { color: var(--ok); } .failed, .stopped, .notready { color: var(--bad); } .loading { color: var(--warn); }
      #chart { width: 100%; height: 160px; border: 1px solid var(--line); }
      #legend span { margin-right: 1rem; white-space: nowrap; } #legend i { display: inline-block; width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: middle; }
      #events { list-style: none; padding: 0; margin: 0; font: 12px/1.5 ui-monospace, monospace; max-height: 18rem; overflow: auto; }
      #events li { border-bottom: 1px solid var(--line); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
      .muted { color: var(--muted); }
    </style>
    </head>
    <body>
    <h1>herald</h1>
    <div id="summary">connecting…</div>
    <div id="config" class="muted"></div>

    <h2>Loaders</h2>
    <table id="loaders"><thead><tr><th>loader</th><th>kind</th><th>state</th><th>last run</th><th>result</th><th>next run</th><th class="num">pulls</th><th class="num">new items</th></tr></thead><tbody></tbody></table>

    <h2>Events per second, by topic (last 5 minutes)</h2>
    <svg id="chart" viewBox="0 0 600 160" preserveAspectRatio="none" data-total="0" role="img" aria-label="events per second by topic"></svg>
    <div id="legend"></div>

    <h2>Latest events</h2>
    <ol id="events"></ol>

    <h2>Outbox</h2>
    <table id="outbox"><thead><tr><th>scheduler</th><th>rule</th><th>key</th><th>waiting since</th></tr></thead><tbody></tbody></table>
    <p id="posts" class="muted"></p>

    <script>
    "use strict";
    const SECONDS = 300, MAX_EVENTS = 50, COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
    const MAX_TOPICS = 64, OTHER = "(other)";
    const counts = new Map();   // topic -> Map(second -> count); at most MAX_TOPICS topics, the rest as OTHER
    let total = 0, refreshQueued = false, lastRefresh = 0;

    function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
    function when(iso) { if (!iso) return "–"; const d = new Date(iso); return isNaN(d) ? "–" : d.toLocaleTimeString(); }
    function relative(iso) {
      if (!iso) return "–";
      const s = Math.round((new Date(iso) - Date.now()) / 1000);
      return s >= 0 ? "in " + s + " s" : -s + " s ago";
    }

    function renderStatus(s) {
      const summary = document.getElementById("summary");
      summary.textContent = "";
      summary.append(el("span", s.ready ? "ready" : "starting", s.ready ? "ready" : "notready"),
        " · " + s.bus.published + " events published · " + s.streams.clients + " live clients · updated " + when(s.time));
      const config = document.getElementById("config");
      config.textContent = "";
      if (s.config) {
        const c = s.config;
        config.append("config " + (c.path || "") + (c.sha1 ? " · sha1 " + c.sha1.slice(0, 12) : "") +
          " · loaded " + when(c.loadedAt) + " · " + c.reloads + " reloads");
        if (!c.lastReloadSuccessful) config.append(" · ", el("span", "last reload failed: " + c.lastErrors.join("; "), "failed"));
      }
      const body = document.querySelector("#loaders tbody");
      body.textContent = "";
      for (const l of s.loaders) {
        const row = el("tr"); row.dataset.loader = l.id;
        row.append(el("td", l.id), el("td", l.kind), el("td", l.state, l.state), el("td", when(l.lastRun)),
          el("td", l.lastResult ? l.lastResult + ": " + l.lastMessage : "–", l.lastResult || ""),
          el("td", l.nextRun ? when(l.nextRun) + " (" + relative(l.nextRun) + ")" : "–"),
          el("td", String(l.pulls), "num"), el("td", String(l.newItems), "num"));
        body.append(row);
      }
      const outbox = document.querySelector("#outbox tbody");
      outbox.textContent = "";
      const totals = [];
      for (const p of s.posts) {
        for (const w of p.pending) {
          const row = el("tr"); row.dataset.key = w.key;
          row.append(el("td", p.name), el("td", w.rule), el("td", w.key), el("td", when(w.created)));
          outbox.append(row);
        }
        const sent = Object.values(p.sent).reduce((a, b) => a + b, 0), failed = Object.values(p.failed).reduce((a, b) => a + b, 0);
        totals.push(p.name + ": " + p.pending.length + " waiting, " + p.held + " held, " + sent + " sent, " + failed + " failed");
      }
      if (!outbox.children.length) { const row = el("tr"); const cell = el("td", "nothing waiting", "muted"); cell.colSpan = 4; row.append(cell); outbox.append(row); }
      document.getElementById("posts").textContent = totals.join(" · ") || "no post schedulers";
    }

    async function refresh() {
      refreshQueued = false; lastRefresh = Date.now();
      try { const r = await fetch("/status", { cache: "no-store" }); if (r.ok) renderStatus(await r.json()); } catch (e) { /* the stream's error handler says it */ }
    }
    function queueRefresh() {
      if (refreshQueued) return;
      refreshQueued = true;
      setTimeout(refresh, Math.max(0, 1000 - (Date.now() - lastRefresh)));
    }

    function addEvent(e) {
      const list = document.getElementById("events");
      const item = el("li");
      item.dataset.seq = e.seq; item.dataset.topic = e.topic;
      item.append(el("span", when(e.time) + "  #" + e.seq + "  ", "muted"), el("strong", e.topic), el("span", "  " + (e.sender || ""), "muted"));
      list.prepend(item);
      while (list.children.length > MAX_EVENTS) list.lastChild.remove();
    }

    function count(topic) {
      const second = Math.floor(Date.now() / 1000);
      if (!counts.has(topic) && counts.size >= MAX_TOPICS) topic = OTHER;
      if (!counts.has(topic)) counts.set(topic, new Map());
      const series = counts.get(topic);
      series.set(second, (series.get(second) || 0) + 1);
      total += 1;
    }

    function drawChart() {
      const svg = document.getElementById("chart"), legend = document.getElementById("legend");
      const now = Math.floor(Date.now() / 1000), start = now - SECONDS + 1;
      const topics = [...counts.entries()].map(([t, s]) => {
        for (const k of s.keys()) if (k < start) s.delete(k);
        if (s.size === 0) counts.delete(t);
        return [t, s, [...s.values()].reduce((a, b) => a + b, 0)];
      }).filter(x => x[2] > 0).sort((a, b) => b[2] - a[2]).slice(0, COLORS.length);
      let peak = 1;
      for (const [, s] of topics) for (const v of s.values()) peak = Math.max(peak, v);
      svg.textContent = ""; legend.textContent = "";
      const ns = "http://www.w3.org/2000/svg";
      topics.forEach(([topic, series], i) => {
        const points = [];
        for (let x = 0; x < SECONDS; x++) points.push((x * 600 / (SECONDS - 1)).toFixed(1) + "," + (158 - (series.get(start + x) || 0) * 150 / peak).toFixed(1));
        const line = document.createElementNS(ns, "polyline");
        line.setAttribute("points", points.join(" ")); line.setAttribute("fill", "none");
        line.setAttribute("stroke", COLORS[i]); line.setAttribute("stroke-width", "1.5"); line.dataset.topic = topic;
        svg.append(line);
        const key = el("span"); const swatch = el("i"); swatch.style.background = COLORS[i];
        key.append(swatch, topic); legend.append(key);
      });
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", "4"); label.setAttribute("y", "12"); label.setAttribute("font-size", "10"); label.setAttribute("fill", "currentColor");
      label.textContent = "peak " + peak + "/s";
      svg.append(label);
      svg.dataset.total = String(total);
    }

    function connect() {
      const stream = new EventSource("/events");
      stream.onmessage = (message) => {
        let e; try { e = JSON.parse(message.data); } catch (x) { return; }
        addEvent(e); count(e.topic); drawChart();
        if (e.topic.startsWith("loader.") || e.topic.startsWith("post.")) queueRefresh();
      };
      stream.onopen = () => refresh();
      stream.onerror = () => { document.getElementById("summary").textContent = "disconnected; reconnecting…"; };
    }

    refresh(); connect(); drawChart();
    setInterval(drawChart, 1000);
    setInterval(queueRefresh, 5000);
    </script>
    </body>
    </html>

    """#
}
